import Synchronization

/// Settles, once, whether a write's COMMIT was sent before the write was given up.
///
/// A write past its deadline is answered at once while its transaction may still be running: it must either never
/// send COMMIT, or be reported as of unknown outcome, since COMMIT may land after the caller was told it failed.
final class CommitGate: Sendable {
    private enum State {
        case open, committing, abandoned
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

    /// The write failed or was given up; returns whether its COMMIT may have been sent.
    func abandon() -> Bool {
        state.withLock { state in
            if case .committing = state { return true }
            state = .abandoned
            return false
        }
    }
}
