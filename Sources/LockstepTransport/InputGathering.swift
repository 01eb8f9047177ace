import Dispatch
import Synchronization
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

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
    private let intervalNanoseconds: Int64
    /// When the last pass began, on the monotonic clock. Loop thread only.
    private var lastPassStart: Int64 = 0
    /// True while the loop waits; whoever clears it signals `waitEnded`.
    private let waiting = Atomic<Bool>(false)
    private let waitEnded = DispatchSemaphore(value: 0)

    init(interval: Duration) {
        let (seconds, attoseconds) = interval.components
        intervalNanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Notes that a pass begins now. Loop thread.
    func passBegins() {
        lastPassStart = Self.now()
    }

    /// Before a pass that follows one that only read: waits until `interval` has passed since that one began, unless
    /// `hasWork` says work is waiting already or work comes meanwhile (`interrupt`). Loop thread.
    func wait(unless hasWork: () -> Bool) {
        let remaining = intervalNanoseconds - (Self.now() - lastPassStart)
        guard remaining > 0 else { return }
        waiting.store(true, ordering: .sequentiallyConsistent)
        var signalled = false
        if !hasWork() {
            signalled = waitEnded.wait(timeout: .now() + .nanoseconds(Int(remaining))) == .success
        }
        // Cleared by `interrupt` meanwhile: its signal is on its way, and must not end the next wait.
        if !waiting.exchange(false, ordering: .sequentiallyConsistent), !signalled { waitEnded.wait() }
    }

    /// Ends a wait in progress; work was submitted. Any thread.
    func interrupt() {
        if waiting.exchange(false, ordering: .sequentiallyConsistent) { waitEnded.signal() }
    }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
