import LockstepStorage
import LockstepTransport

/// Patches and replies held back until the changes before them are in the log.
///
/// Write-ahead with group commit: everything produced while one write is in flight goes into
/// the next, so a burst of actions costs one transaction, not one per action. ``LocalLogPipeline`` keeps one for the
/// whole server, ``SharedLogPipeline`` one per room, since each room commits on its own there. Loop-bound.
final class DurabilityQueue {
    /// Something that may leave the server only after the log has what precedes it.
    enum Release {
        case patch(Room, Room.LoggedPatch)
        case reply(any Requester, RequestAnswer)
        /// An idle room whose snapshot at `version` is written: it may leave memory.
        case evict(Room, version: Int)
    }

    var pending: [Release] = []
    var rows: [StoredChange] = []
    var snapshots: [PendingSnapshot] = []
    /// Session marks that moved; an ack waits for its mark even when its action changed nothing.
    var marks: [StoredMark] = []
    /// The epochs of the rooms the next write touches, stored with a room's first write.
    var epochs: [String: String] = [:]
    /// Timers scheduled and gone since the last write.
    var timers: [StoredTimer] = []
    var timersGone: [TimerKey] = []
    /// What the write in flight will release; nil when no write is in flight.
    var inFlight: [Release]?
    var writeScheduled = false

    /// Something is waiting to be written: changes, snapshots, marks or epochs.
    var hasWrites: Bool {
        !rows.isEmpty || !snapshots.isEmpty || !marks.isEmpty || !epochs.isEmpty || !timers.isEmpty
            || !timersGone.isEmpty
    }

    /// True when nothing waits: a reply can go out at once.
    var isIdle: Bool { pending.isEmpty && inFlight == nil && marks.isEmpty && timers.isEmpty && timersGone.isEmpty }

    /// Hands everything waiting over to a write: it is in flight until `finished()`. Returns what the write stores.
    func takeWrite(
        sessions: SessionWrites
    ) -> (rows: [StoredChange], snapshots: [PendingSnapshot], sessions: SessionWrites) {
        var sessions = sessions
        sessions.marks = marks
        sessions.epochs = epochs
        sessions.timers = timers
        sessions.timersGone = timersGone
        defer {
            timers.removeAll()
            timersGone.removeAll()
            inFlight = pending
            pending.removeAll()
            rows.removeAll()
            snapshots.removeAll()
            marks.removeAll()
            epochs.removeAll()
        }
        return (rows, snapshots, sessions)
    }

    /// The write in flight ended: returns what it was holding back.
    func finished() -> [Release] {
        defer { inFlight = nil }
        return inFlight ?? []
    }
}

@available(*, unavailable)
extension DurabilityQueue: Sendable {}
