public import LockstepJSON

/// A client in a room, as `presence` lists it.
public struct Peer: Sendable, Equatable {
    /// The server-assigned id, as in `cause.client` and `you`.
    public var client: String
    /// The display name from the `name` query parameter (the client id when none was given).
    public var name: String

    /// A peer as `presence` lists it.
    public init(client: String, name: String) {
        self.client = client
        self.name = name
    }

    /// One entry of `presence`'s `peers`: `{"client":...,"name":...}`.
    public var json: JSON { ["client": .string(client), "name": .string(name)] }
}
