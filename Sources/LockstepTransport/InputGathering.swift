import Dispatch
import Synchronization

/// Lets input gather before the loop's next pass when its last pass only read.
///
/// Many clients sending a little each (cursor moves, presence states) wake the loop once per message, and each wake
/// costs a context switch and, on `poll`, a look at every socket. After a pass that read and sent nothing, the next
/// one first waits until `interval` has passed since the last began, so that whatever arrives meanwhile is read by
/// one wake. A pass that sent anything (an answer, a patch) is followed at once, so a client that waits for an answer
/// before it sends again is never held back; work from another thread (a storage commit, an actor's job) ends the
/// wait, so it costs such work nothing. Only input arriving right after a pass that only read waits, at most
/// `interval`.
// @unchecked Sendable: `lastPassStart` is read and written on the loop thread only; the rest is atomic or a semaphore.
final class InputGathering: @unchecked Sendable {
    private let interval: Duration
    /// When the last pass began. Loop thread only.
    private var lastPassStart = ContinuousClock.now
    /// True while the loop waits; whoever clears it signals `waitEnded`.
    private let waiting = Atomic<Bool>(false)
    private let waitEnded = DispatchSemaphore(value: 0)

    init(interval: Duration) {
        self.interval = interval
    }

    /// Notes that a pass begins now. Loop thread.
    func passBegins() {
        lastPassStart = .now
    }

    /// Before a pass that follows one that only read: waits until `interval` has passed since that one began, unless
    /// `hasWork` says work is waiting already or work comes meanwhile (`interrupt`). Loop thread.
    func wait(unless hasWork: () -> Bool) {
        let remaining = interval - lastPassStart.duration(to: .now)
        guard remaining > .zero else { return }
        waiting.store(true, ordering: .sequentiallyConsistent)
        var signalled = false
        if !hasWork() {
            let nanoseconds = Int(remaining / .nanoseconds(1))
            signalled = waitEnded.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
        }
        // Cleared by `interrupt` meanwhile: its signal is on its way, and must not end the next wait.
        if !waiting.exchange(false, ordering: .sequentiallyConsistent), !signalled { waitEnded.wait() }
    }

    /// Ends a wait in progress; work was submitted. Any thread.
    func interrupt() {
        if waiting.exchange(false, ordering: .sequentiallyConsistent) { waitEnded.signal() }
    }
}
