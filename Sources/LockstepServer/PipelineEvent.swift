import LockstepCore

/// What a ``CommitPipeline`` reports to the server it works for: a room's turn for an input, a write that ended,
/// another server's change, what storage can no longer vouch for. The server carries each out at once, in the order
/// reported (``RoomHost/handle(_:)``); a pipeline reads the server's rooms but never calls into it otherwise.
enum PipelineEvent {
    /// The turn of `input` in the room came: at once, or inside the room's locked write, after what other servers
    /// committed before it.
    case turn(RoomInput, Room)
    /// A write ended: what waited for it (patches, answers, rooms to evict) leaves, in order.
    case released([RoomRelease])
    /// A change is committed and goes to the room's clients now: in memory at once, another server's as it was read.
    case committed(Room.LoggedPatch, Room)
    /// What the session was sent may not hold (a request's outcome is unknown, or its changes were taken back): it is
    /// told `notice` and closed (1011), and resumes from what is stored.
    case sessionLost(Session, notice: ServerMessage, reason: String)
    /// The room's memory cannot be trusted (a write failed, its log could not be followed): unless another copy of
    /// the room was read since, it leaves memory, and its clients are told `notice` and closed (1011).
    case roomLost(Room, notice: ServerMessage, reason: String)
    /// A write of the room named failed: its timers are read from storage again.
    case timersUnsure(room: String)
    /// Everything of the room is stored, up to `version`: it may leave memory if it is still idle there.
    case evictable(Room, version: Int)
    /// Nothing of the room waits in the pipeline any more: it may leave memory once idle.
    case idle(Room)
    /// The room's clients on other servers joined or left: its presence is due.
    case peersChanged(Room)
    /// The presence states of these clients on other servers changed.
    case peerStatesChanged([String], Room)
}

@available(*, unavailable)
extension PipelineEvent: Sendable {}
