public import LockstepJSON

/// Why a version exists: the `cause` of a patch and of a history entry.
///
/// Besides what was asked (`kind`, `action`, `of`, `to`), a cause says who and when: `at`, the server's time of the
/// change, and, where known, the sender's display `name` and token subject `sub`. A room's history is then an audit
/// trail that outlives the connections.
public struct Cause: Sendable, Equatable {
    /// The wire's `cause.kind`.
    public enum Kind: String, Sendable {
        /// A client's action ran through the reducer.
        case action
        /// A global undo, or with `mine` an undo mine, took back the change at version `of`.
        case undo
        /// A global redo, or with `mine` a redo mine, re-applied the change at version `of`.
        case redo
        /// An action an app's effect sent; no client sent it.
        case effect
        /// The room went back to the state of version `to`.
        case revert
        /// A timer came due: its action, as its sender scheduled it.
        case timer
        /// The app's action for a client that joined the room.
        case join
        /// The app's action for a client that left the room.
        case leave
    }

    /// What made the change (`cause.kind`), which says which of the other fields are set.
    public var kind: Kind
    /// The client that sent the request (none for effects).
    public var client: String?
    /// The request's `id`, if it had one.
    public var id: String?
    /// The action, for `action` and `effect`.
    public var action: JSON?
    /// For `undo` and `redo`: the version of the original change.
    public var of: Int?
    /// For `revert`: the version whose state the room went back to.
    public var to: Int?
    /// For `undo` and `redo`: the sender took back (or re-applied) one of its own changes, not the room's latest.
    public var mine: Bool
    /// When the server applied the change, in milliseconds since the Unix epoch; never lower than the previous
    /// change's in the same room.
    public var at: Int?
    /// The sender's display name.
    public var name: String?
    /// The subject (`sub`) of the sender's token.
    public var sub: String?
    /// For `timer`: the timer's name.
    public var timer: String?

    /// A cause with the fields of the wire's `cause` object, each absent unless given.
    public init(
        kind: Kind, client: String? = nil, id: String? = nil, action: JSON? = nil, of: Int? = nil, to: Int? = nil,
        mine: Bool = false, at: Int? = nil, name: String? = nil, sub: String? = nil
    ) {
        self.kind = kind
        self.client = client
        self.id = id
        self.action = action
        self.of = of
        self.to = to
        self.mine = mine
        self.at = at
        self.name = name
        self.sub = sub
    }

    /// The cause of a change the store reports, made by `client` with request `id`.
    public init(_ kind: Change.Kind, client: String?, id: String?, action: JSON?) {
        switch kind {
        case .action: self.init(kind: .action, client: client, id: id, action: action)
        case .undo(let version): self.init(kind: .undo, client: client, id: id, of: version)
        case .redo(let version): self.init(kind: .redo, client: client, id: id, of: version)
        case .revert(let version): self.init(kind: .revert, client: client, id: id, to: version)
        case .undoMine(let version, _): self.init(kind: .undo, client: client, id: id, of: version, mine: true)
        case .redoMine(let version, _): self.init(kind: .redo, client: client, id: id, of: version, mine: true)
        }
    }

    /// The same cause with who and when: the change's time and, where known, the sender's name and token subject.
    public func stamped(at time: Int, by sender: Sender?) -> Cause {
        var cause = self
        cause.at = time
        cause.name = sender?.name
        cause.sub = sender?.subject
        return cause
    }

    /// The wire's `cause` object, with only the fields that are set.
    public var json: JSON {
        var object: JSONObject = ["kind": .string(kind.rawValue)]
        if let client { object["client"] = .string(client) }
        if let id { object["id"] = .string(id) }
        if let action { object["action"] = action }
        if let of { object["of"] = .int(of) }
        if let to { object["to"] = .int(to) }
        if let timer { object["timer"] = .string(timer) }
        if mine { object["mine"] = true }
        if let at { object["at"] = .int(at) }
        if let name { object["name"] = .string(name) }
        if let sub { object["sub"] = .string(sub) }
        return .object(object)
    }

    /// Reads a `cause` object; a missing or unknown `kind` is `bad_message`.
    public init(json: JSON) throws(WireError) {
        let object = try WireError.object(json)
        guard let kind = object["kind"]?.stringValue.flatMap(Kind.init(rawValue:)) else {
            throw .badMessage("cause.kind must be action, undo, redo, effect, revert, timer, join or leave")
        }
        self.init(
            kind: kind,
            client: object["client"]?.stringValue,
            id: object["id"]?.stringValue,
            action: object["action"],
            of: object["of"]?.intValue,
            to: object["to"]?.intValue,
            mine: object["mine"] == true,
            at: object["at"]?.intValue,
            name: object["name"]?.stringValue,
            sub: object["sub"]?.stringValue
        )
        timer = object["timer"]?.stringValue
    }
}
