import Synchronization

/// Commit notices waiting to go out: the newest committed version of each room, and whether a sender is running.
///
/// A room's transaction does not send its own NOTIFY: PostgreSQL makes every committing transaction that notifies
/// wait for the previous one's commit, WAL flush included (a database-wide lock taken before the commit), so the
/// commits of several rooms could not share a flush. Notices are sent just after the commit instead, those of every
/// room committed meanwhile in one statement of their own, which writes no WAL and so waits for no flush.
final class CommitNotices: Sendable {
    private struct State {
        var waiting: [String: Int] = [:]
        var sending = false
    }

    private let state = Mutex(State())

    /// Adds `room`'s commit up to `version`; true when no sender runs, and the caller must start one.
    func add(room: String, version: Int) -> Bool {
        state.withLock { state in
            state.waiting[room] = max(version, state.waiting[room] ?? 0)
            guard !state.sending else { return false }
            state.sending = true
            return true
        }
    }

    /// Everything waiting, for the sender to send; empty when nothing waits, and then the sender has stopped.
    func take() -> [String: Int] {
        state.withLock { state in
            defer { state.waiting = [:] }
            if state.waiting.isEmpty { state.sending = false }
            return state.waiting
        }
    }

    /// Puts back notices a failed send did not deliver, behind any newer ones of the same rooms.
    func putBack(_ notices: [String: Int]) {
        state.withLock { state in
            state.waiting.merge(notices, uniquingKeysWith: max)
        }
    }

    /// The sender stops without sending what waits (the storage closed).
    func stop() {
        state.withLock { state in
            state.waiting = [:]
            state.sending = false
        }
    }

    /// Nothing waits and no sender runs.
    var isIdle: Bool { state.withLock { $0.waiting.isEmpty && !$0.sending } }
}
