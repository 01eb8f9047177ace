public import LockstepJSON

/// A client in a room, as `presence` lists it.
public struct Peer: Sendable, Equatable {
    /// The server-assigned id, as in `cause.client` and `you`.
    public var client: String
    /// The display name from the `name` query parameter (the client id when none was given).
    public var name: String
    /// The subject (`sub`) of its token, where it has one: who it is, not what it calls itself.
    public var subject: String?
    /// What the client says it is doing (its presence state: a cursor, "typing"), nil while it has none. Never part
    /// of the room's state.
    public var state: JSON?

    /// A peer as `presence` lists it.
    ///
    /// - Parameters:
    ///   - client: the server-assigned id.
    ///   - name: the display name.
    ///   - subject: the token's subject, where there is one.
    ///   - state: the client's presence state, nil while it has none.
    public init(client: String, name: String, subject: String? = nil, state: JSON? = nil) {
        self.client = client
        self.name = name
        self.subject = subject
        self.state = state
    }

    /// Reads one entry of `presence`'s `peers` or `changed`; nil without a string `client` and `name`. A `state` of
    /// `null` (a cleared one, in `changed`) reads as none.
    public init?(json: JSON) {
        guard case .string(let client)? = json["client"], case .string(let name)? = json["name"] else { return nil }
        let state = json["state"]
        self.init(
            client: client, name: name, subject: json["sub"]?.stringValue, state: state?.isNull == true ? nil : state)
    }

    /// One entry of `presence`'s `peers`: `{"client":...,"name":...}`, with `"sub"` where there is one and `"state"`
    /// once the client has one.
    public var json: JSON {
        var entry: JSONObject = ["client": .string(client), "name": .string(name)]
        if let subject { entry["sub"] = .string(subject) }
        if let state { entry["state"] = state }
        return .object(entry)
    }

    /// One entry of `presence`'s `changed`: as in ``json``, with `"state":null` for a state the client cleared.
    public var changeJSON: JSON {
        guard state == nil, case .object(var entry) = json else { return json }
        entry["state"] = .null
        return .object(entry)
    }
}
