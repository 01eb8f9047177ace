#if LOCKSTEP_MUTANTS
import LockstepCore
#endif
import LockstepStorage

/// Patches and replies held back until the changes before them are in the log.
///
/// Write-ahead with group commit: everything produced while one write is in flight goes into
/// the next, so a burst of actions costs one transaction, not one per action. ``LocalLogPipeline`` keeps one for the
/// whole server, ``SharedLogPipeline`` one per room, since each room commits on its own there, and the cluster
/// simulation one per server with a log of its own. No I/O; loop-bound.
final class DurabilityQueue<Release: HeldRelease> {
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

    /// Timers scheduled and gone (fired or cancelled) since the last write. The log stores every scheduled row, then
    /// removes every gone one; so that a name's last change is what it keeps, a timer gone drops its name's rows
    /// scheduled earlier in the write, and one scheduled drops its name's earlier removal (its row replaces the
    /// stored one).
    func timersChanged(scheduled: [StoredTimer], gone: [TimerKey]) {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.timerRowsNotCoalesced) {
            timers += scheduled
            timersGone += gone
            return
        }
        #endif
        for timer in scheduled {
            let key = TimerKey(room: timer.room, name: timer.name)
            timersGone.removeAll { $0 == key }
            timers.append(timer)
        }
        for key in gone {
            timers.removeAll { $0.room == key.room && $0.name == key.name }
            timersGone.append(key)
        }
    }

    /// A change's row, with what it holds back until the row is stored and the snapshots due with it.
    func append(_ row: StoredChange, holding release: Release, snapshots due: [PendingSnapshot]) {
        rows.append(row)
        pending.append(release)
        snapshots += due
    }

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

    /// The rooms a write stored something of: changes, evictions, marks or timers.
    static func rooms(of written: [Release], sessions: SessionWrites) -> Set<String> {
        var rooms = Set(sessions.marks.map(\.room))
        rooms.formUnion(sessions.timers.map(\.room))
        rooms.formUnion(sessions.timersGone.map(\.room))
        for item in written where !item.isReply { rooms.insert(item.roomName) }
        return rooms
    }

    /// A write failed: nothing of it is acknowledged, and `rooms` (``rooms(of:sessions:)``) go back to what the log
    /// has, so everything of theirs waiting for the next write goes too. Returns what of the write may still go out:
    /// the replies of other rooms, in order.
    func writeFailed(_ written: [Release], rooms: Set<String>) -> [Release] {
        pending.removeAll { rooms.contains($0.roomName) }
        rows.removeAll { rooms.contains($0.room) }
        snapshots.removeAll { rooms.contains($0.room) }
        marks.removeAll { rooms.contains($0.room) }
        timers.removeAll { rooms.contains($0.room) }
        timersGone.removeAll { rooms.contains($0.room) }
        return written.filter { $0.isReply && !rooms.contains($0.roomName) }
    }

    /// The write in flight ended: returns what it was holding back.
    func finished() -> [Release] {
        defer { inFlight = nil }
        return inFlight ?? []
    }
}

@available(*, unavailable)
extension DurabilityQueue: Sendable {}
