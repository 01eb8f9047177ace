public import LockstepJSON

/// Why a version exists: the `cause` of a patch and of a history entry.
public struct Cause: Sendable, Equatable {
    /// The wire's `cause.kind`.
    public enum Kind: String, Sendable {
        case action, undo, redo, effect, revert
    }

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

    public init(
        kind: Kind, client: String? = nil, id: String? = nil, action: JSON? = nil, of: Int? = nil, to: Int? = nil
    ) {
        self.kind = kind
        self.client = client
        self.id = id
        self.action = action
        self.of = of
        self.to = to
    }

    /// The cause of a change the store reports, made by `client` with request `id`.
    public init(_ kind: Change.Kind, client: String?, id: String?, action: JSON?) {
        switch kind {
        case .action: self.init(kind: .action, client: client, id: id, action: action)
        case .undo(let version): self.init(kind: .undo, client: client, id: id, of: version)
        case .redo(let version): self.init(kind: .redo, client: client, id: id, of: version)
        case .revert(let version): self.init(kind: .revert, client: client, id: id, to: version)
        }
    }

    public var json: JSON {
        var object: JSONObject = ["kind": .string(kind.rawValue)]
        if let client { object["client"] = .string(client) }
        if let id { object["id"] = .string(id) }
        if let action { object["action"] = action }
        if let of { object["of"] = .int(of) }
        if let to { object["to"] = .int(to) }
        return .object(object)
    }

    public init(json: JSON) throws(WireError) {
        let object = try WireError.object(json)
        guard let kind = object["kind"]?.stringValue.flatMap(Kind.init(rawValue:)) else {
            throw .badMessage("cause.kind must be action, undo, redo, effect or revert")
        }
        self.init(
            kind: kind,
            client: object["client"]?.stringValue,
            id: object["id"]?.stringValue,
            action: object["action"],
            of: object["of"]?.intValue,
            to: object["to"]?.intValue
        )
    }
}
