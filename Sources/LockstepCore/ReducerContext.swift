public import LockstepJSON

/// What a reducer may know beyond the state and the action: who sent it, when, and a random source.
///
/// All of it is recorded with the change (the `cause`'s `at`, `name` and `sub`; the room's epoch and the version seed
/// the random source), so a reducer that uses the context stays pure: replaying a recording gives the same states.
public struct ReducerContext: Sendable {
    /// Who sent the request; nil for an effect's action when its request is unknown, and in a replay without it.
    public var sender: Sender?
    /// When the server applied the change, in milliseconds since the Unix epoch; never lower than the previous
    /// change's in the same room.
    public var time: Int
    /// The version the change gets if it changes the state.
    public var version: Int
    /// Seeded from the room's epoch and ``version``: the same numbers wherever and whenever the change is replayed.
    public var random: SeededRandom
    /// The server's rule for what the sender may write (private parts of the room): given an action's change as
    /// patches, why it is refused, or nil. The store takes a refused change back before it counts.
    public var refusal: (@Sendable (_ forward: JSONPatch, _ inverse: JSONPatch) -> String?)?

    /// A context for the change at `version` of the room whose epoch is `epoch`, sent by `sender` at `time`.
    public init(sender: Sender? = nil, time: Int = 0, version: Int = 0, epoch: String = "") {
        self.sender = sender
        self.time = time
        self.version = version
        self.random = SeededRandom(epoch: epoch, version: version)
    }
}
