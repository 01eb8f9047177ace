import Synchronization

/// Bounds an async operation in time even when it ignores cancellation (a query on a connection that went silent):
/// the caller gets an answer at the deadline, and the operation is cancelled and left to end on its own.
enum Deadline {
    /// The deadline passed first.
    struct Expired: Error {}

    static func race<T: Sendable>(
        _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T
    ) async -> Result<T, any Error> {
        let race = Race<T>()
        let work = Task {
            do {
                race.finish(.success(try await operation()))
            } catch {
                race.finish(.failure(error))
            }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            race.finish(.failure(Expired()))
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { race.wait($0) }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
        work.cancel()
        timer.cancel()
        return result
    }

    /// The first of several outcomes, handed to one waiter whether it arrives before or after it.
    private final class Race<T: Sendable>: Sendable {
        private enum State {
            case pending
            case waiting(CheckedContinuation<Result<T, any Error>, Never>)
            case finished(Result<T, any Error>)
            case delivered
        }

        private let state = Mutex(State.pending)

        func wait(_ continuation: CheckedContinuation<Result<T, any Error>, Never>) {
            let early: Result<T, any Error>? = state.withLock { state in
                switch state {
                case .pending:
                    state = .waiting(continuation)
                    return nil
                case .finished(let result):
                    state = .delivered
                    return result
                case .waiting, .delivered:
                    preconditionFailure("one waiter only")
                }
            }
            if let early { continuation.resume(returning: early) }
        }

        func finish(_ result: Result<T, any Error>) {
            let waiter: CheckedContinuation<Result<T, any Error>, Never>? = state.withLock { state in
                switch state {
                case .pending:
                    state = .finished(result)
                    return nil
                case .waiting(let continuation):
                    state = .delivered
                    return continuation
                case .finished, .delivered:
                    return nil
                }
            }
            waiter?.resume(returning: result)
        }
    }
}
