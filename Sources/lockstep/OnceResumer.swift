import Dispatch
import Synchronization

/// Resumes a continuation at most once, from whichever signal arrives first.
final class OnceResumer: Sendable {
    private let state: Mutex<(continuation: CheckedContinuation<Int32, Never>?, sources: [any DispatchSourceSignal])>

    init(_ continuation: CheckedContinuation<Int32, Never>) {
        state = Mutex((continuation, []))
    }

    /// Keeps a signal source alive for as long as the process waits.
    func retain(_ source: any DispatchSourceSignal) {
        state.withLock { $0.sources.append(source) }
    }

    func resume(_ value: Int32) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: value)
    }
}
