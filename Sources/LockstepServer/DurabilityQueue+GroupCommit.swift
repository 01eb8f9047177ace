import LockstepStorage

/// The group commit of a log of the server's own, as decisions: one write at a time for every room, everything queued
/// meanwhile in the next. ``LocalLogPipeline`` carries them out (the write itself, sending what they release) and the
/// cluster simulation runs them as they are.
extension DurabilityQueue {
    /// What to do once a write was started or returned.
    enum GroupCommitStep {
        /// Store this; the write is in flight until ``writeReturned(stored:sessions:)``.
        case write(rows: [StoredChange], snapshots: [PendingSnapshot], sessions: SessionWrites)
        /// Nothing to write: these waited only for the write that ended, and go out now.
        case release([Release])
    }

    /// What a write's return means.
    enum WriteOutcome {
        /// Stored: what the write held back goes out, in order.
        case stored(release: [Release])
        /// Refused: nothing of it is acknowledged. `rooms` (``rooms(of:sessions:)``) go back to what the log has,
        /// with their timers; `release` may still go out (the other rooms' replies); `written` is all the write held.
        case failed(release: [Release], rooms: Set<String>, written: [Release])
    }

    /// Something was queued: whether a write must be started after the current callback (none is due or in flight),
    /// so that what arrives together shares one transaction.
    func writeWanted() -> Bool {
        guard !writeScheduled, inFlight == nil else { return false }
        writeScheduled = true
        return true
    }

    /// The write asked for by ``writeWanted()``, or the next after one returned: nil while one is in flight.
    func startWrite(sessions: SessionWrites) -> GroupCommitStep? {
        writeScheduled = false
        guard inFlight == nil else { return nil }
        guard hasWrites else {
            defer { pending.removeAll() }
            return .release(pending)
        }
        let (rows, snapshots, sessions) = takeWrite(sessions: sessions)
        return .write(rows: rows, snapshots: snapshots, sessions: sessions)
    }

    /// The write in flight returned, `stored` or not, with the `sessions` it was given.
    func writeReturned(stored: Bool, sessions: SessionWrites) -> WriteOutcome {
        let written = finished()
        guard !stored else { return .stored(release: written) }
        let rooms = Self.rooms(of: written, sessions: sessions)
        return .failed(release: writeFailed(written, rooms: rooms), rooms: rooms, written: written)
    }
}
