public import LockstepCore
public import LockstepJSON

/// A mirror typed by the server's reducer (``SharedStore`` for a whole room, ``SharedView`` for part of one): what
/// it forwards to its untyped client, so both send the reducer's actions and read versions the same way.
public protocol TypedRoomClient: Sendable {
    /// The reducer the server runs; its `Action` is what the mirror sends.
    associatedtype R: Reducer
    /// The untyped client underneath: status, peers, history, and the raw update stream.
    var room: RoomClient { get }
    /// The version of the confirmed state, as last observed.
    var version: Int { get }
    /// Requests waiting for the server's answer (actions, undo and redo, kept ones included), as last observed.
    var pendingCount: Int { get }
}

extension TypedRoomClient {
    /// Ends the connection; pending sends throw ``RoomClientError/closed`` (kept ones stay kept).
    public func close() async { await room.close() }

    /// Sends a typed action (naming whole-room paths, as the reducer reads them). Returns the version the room
    /// reached once the server acknowledged it, its patch already mirrored if it touched the mirror; throws if the
    /// server refused it. A ``SharedStore`` shows it in `state` at once, and drops it from there if refused.
    @discardableResult
    public func send(_ action: R.Action) async throws(RoomClientError) -> Int {
        try await room.send(action: try Self.encode(action))
    }

    /// Has the server apply a typed action after `delay`, as this client's change, even with nobody connected then
    /// (see ``RoomClient/send(action:after:timer:)``); `timer` names it, replacing a pending timer of that name.
    /// Returns once the timer is stored. Not predicted: the state changes when the timer fires and its patch arrives.
    @discardableResult
    public func send(_ action: R.Action, after delay: Duration, timer: String? = nil) async throws(RoomClientError)
        -> ScheduledTimer
    {
        try await room.send(action: try Self.encode(action), after: delay, timer: timer)
    }

    /// Cancels the room's pending timer `timer` (see ``RoomClient/cancel(timer:)``).
    public func cancel(timer: String) async throws(RoomClientError) { try await room.cancel(timer: timer) }

    /// Queues a typed action without waiting for the server's answer (see ``RoomClient/enqueue(action:)``): what an
    /// app does from a button, offline or not; a ``SharedStore`` shows it at once.
    public func enqueue(_ action: R.Action) async throws(RoomClientError) {
        try await room.enqueue(action: try Self.encode(action))
    }

    private static func encode(_ action: R.Action) throws(RoomClientError) -> JSON {
        do {
            return try JSON(encoding: action)
        } catch {
            throw .coding("\(R.Action.self) does not encode: \(error)")
        }
    }

    /// Reverts the room's most recent change, whoever made it; with `mine`, this client's (its session's) own most
    /// recent change still in effect. Runs on the server only: not predicted; the mirror shows it when its patch
    /// arrives (a ``SharedStore`` applies the actions still pending again over it).
    @discardableResult
    public func undo(mine: Bool = false) async throws(RoomClientError) -> Int { try await room.undo(mine: mine) }

    /// Says what this client is doing, or nil for nothing; its peers see it in `peers` (see
    /// ``RoomClient/setPresence(_:)``: throttled, the latest state wins).
    public func setPresence(_ state: JSON?) async throws(RoomClientError) { try await room.setPresence(state) }

    /// Re-applies the most recently undone change; with `mine`, the latest one this client's own undo took back.
    /// Runs on the server only: not predicted.
    @discardableResult
    public func redo(mine: Bool = false) async throws(RoomClientError) -> Int { try await room.redo(mine: mine) }
}
