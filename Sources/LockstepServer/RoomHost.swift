import LockstepCore
import LockstepStorage
import Logging

/// What a ``CommitPipeline`` may ask of the server it works for: the rooms in memory, applying an input in a room's
/// turn, releasing what became durable, and acting on connections when storage fails. A pipeline sees the server
/// only through this, isolated to it (the transport's loop).
protocol RoomHost: Actor {
    nonisolated var configuration: ServerConfiguration { get }
    nonisolated var logger: Logger { get }
    nonisolated var clock: ServerClock { get }
    /// The server is shutting down: pumps and polls end.
    nonisolated var isStopped: Bool { get }
    /// The rooms in memory, by name.
    var rooms: [String: Room] { get }

    /// Applies a request, an effect's action or a due timer to `room`.
    func apply(_ input: RoomInput, in room: Room)
    /// Sends patches, replies and evictions that waited for a write, in order.
    func release(_ items: [RoomRelease])
    /// Sends `patch` to the room's clients now.
    func broadcast(_ patch: Room.LoggedPatch, in room: Room)
    /// Tells `session` why and closes it (1011), so its client resumes from what is stored.
    func sendAway(_ session: Session, telling notice: ServerMessage, reason: String)
    /// Takes `room` out of memory and closes its clients (1011) after telling them `notice`.
    func drop(_ room: Room, telling notice: ServerMessage, reason: String)
    /// A write of `room` failed: its timers are read from storage again.
    func rereadTimers(of room: String)
    /// `room` leaves memory, stored up to `version`.
    func evict(_ room: Room, at version: Int)
    /// Nothing of `room` runs any more: it may leave memory once idle.
    func roomBecameIdle(_ room: Room)
    /// The room's presence is due to be sent.
    func schedulePresence(in room: Room)
    /// The presence states of `clients` changed.
    func presenceStatesChanged(of clients: [String], in room: Room)
}

extension SyncServer: RoomHost {}
