public import LockstepJSON

/// A client in a room, as `presence` lists it.
public struct Peer: Sendable, Equatable {
    /// The server-assigned id, as in `cause.client` and `you`.
    public var client: String
    /// The display name from the `name` query parameter (the client id when none was given).
    public var name: String
    /// The subject (`sub`) of its token, where it has one: who it is, not what it calls itself.
    public var subject: String?

    /// A peer as `presence` lists it.
    public init(client: String, name: String, subject: String? = nil) {
        self.client = client
        self.name = name
        self.subject = subject
    }

    /// One entry of `presence`'s `peers`: `{"client":...,"name":...}`, with `"sub"` where there is one.
    public var json: JSON {
        guard let subject else { return ["client": .string(client), "name": .string(name)] }
        return ["client": .string(client), "name": .string(name), "sub": .string(subject)]
    }
}
