import Foundation

/// Runs blocking work (a socket read, a child's output) on a thread of its own and waits for it without holding one of
/// the task pool's few threads: on two cores the pool has two, and the servers under test need them too.
@discardableResult
public func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
