public import LockstepJSON

/// An app's own actions for a client joining and leaving a room, as JSON for the room's reducer; nil where the app
/// has none (the default: presence alone says who is there).
public struct Membership: Sendable {
    /// The action for a client that joined; nil for none.
    public let joined: (@Sendable (Sender) -> JSON?)?
    /// The action for a client that left; nil for none.
    public let left: (@Sendable (Sender) -> JSON?)?

    /// Actions made by `joined` and `left`.
    public init(joined: (@Sendable (Sender) -> JSON?)? = nil, left: (@Sendable (Sender) -> JSON?)? = nil) {
        self.joined = joined
        self.left = left
    }
}
