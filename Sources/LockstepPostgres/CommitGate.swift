import Synchronization

/// Settles, once, whether a write's COMMIT was sent before the write was given up, and whether it landed.
///
/// A write past its deadline is answered at once while its transaction may still be running: it must either never
/// send COMMIT, or be reported as of unknown outcome, since COMMIT may land after the caller was told it failed. A
/// COMMIT that lands after that is announced by the transaction's own task, to this server too.
final class CommitGate: Sendable {
    /// What the caller of a write that failed or was given up may say of it.
    enum Outcome {
        /// COMMIT was never sent: nothing was stored.
        case notSent
        /// COMMIT was sent and is unanswered: it may or may not land.
        case unknown
        /// COMMIT was answered before the caller gave up: everything was stored.
        case committed
    }

    private enum State {
        case open, committing, committed, abandoned, abandonedCommitting
    }

    private let state = Mutex(State.open)

    /// The transaction is about to send COMMIT; false if the write was already given up (roll back instead).
    func enterCommit() -> Bool {
        state.withLock { state in
            guard case .open = state else { return false }
            state = .committing
            return true
        }
    }

    /// COMMIT was answered; returns whether the caller had already given up on the write (then nobody else knows it
    /// landed).
    func committed() -> Bool {
        state.withLock { state in
            if case .abandonedCommitting = state { return true }
            state = .committed
            return false
        }
    }

    /// The write failed or was given up: what its caller may say of it.
    func abandon() -> Outcome {
        state.withLock { state in
            switch state {
            case .committed:
                return .committed
            case .committing, .abandonedCommitting:
                state = .abandonedCommitting
                return .unknown
            case .open, .abandoned:
                state = .abandoned
                return .notSent
            }
        }
    }
}
