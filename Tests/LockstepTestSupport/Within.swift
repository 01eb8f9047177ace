import Synchronization

/// A wait that ran out: what the test was waiting for.
public struct TimedOut: Error, CustomStringConvertible {
    public let what: String

    public init(what: String) {
        self.what = what
    }

    public var description: String { "timed out waiting for \(what)" }
}

/// Runs `body`, failing with `TimedOut` after `seconds`, so a test that waits for an event that never comes fails.
///
/// The body is cancelled when time runs out but not waited for: awaiting another task's value or a blocking call
/// does not end on cancellation, and a task group would wait for it for ever, hanging the whole test run instead of
/// failing one test. A cancelled caller (a test over its time limit) returns at once for the same reason.
public func within<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = Race<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation)
            let work = Task {
                do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
            }
            race.onLoss { work.cancel() }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                race.finish(.failure(TimedOut(what: what)))
            }
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first of a body, a timer and a cancellation to finish resumes the waiting test; the others are ignored.
private final class Race<T: Sendable>: Sendable {
    private struct Entrants {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var finished = false
        var loser: (@Sendable () -> Void)?
    }

    private let entrants = Mutex(Entrants())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = entrants.withLock { entrants -> Result<T, any Error>? in
            if let early = entrants.early { return early }
            entrants.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// `cancel` runs when something other than the body finishes first (at once if that already happened).
    func onLoss(_ cancel: @escaping @Sendable () -> Void) {
        let lost = entrants.withLock { entrants in
            entrants.loser = cancel
            return entrants.finished
        }
        if lost { cancel() }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, loser) = entrants.withLock { entrants -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            guard !entrants.finished else { return (nil, nil) }
            entrants.finished = true
            guard let continuation = entrants.continuation else {
                entrants.early = result
                return (nil, entrants.loser)
            }
            entrants.continuation = nil
            return (continuation, entrants.loser)
        }
        continuation?.resume(with: result)
        loser?()
    }
}
