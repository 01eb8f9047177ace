public import Clocks
import Synchronization

/// A `TestClock` that counts the tasks sleeping on it: how many wait at once, and the most that ever did. A test can
/// so check that the server keeps one wait for something, not one per event.
public struct CountingClock: Clock, Sendable {
    public typealias Duration = Swift.Duration
    public typealias Instant = TestClock<Duration>.Instant

    public let base: TestClock<Duration>
    private let sleepers = Sleepers()

    public init(_ base: TestClock<Duration>) {
        self.base = base
    }

    public var now: Instant { base.now }
    public var minimumResolution: Duration { base.minimumResolution }

    /// The most tasks that slept on the clock at once.
    public var mostSleepers: Int { sleepers.count.withLock { $0.most } }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        sleepers.count.withLock { count in
            count.now += 1
            count.most = max(count.most, count.now)
        }
        defer { sleepers.count.withLock { $0.now -= 1 } }
        try await base.sleep(until: deadline, tolerance: tolerance)
    }

    private final class Sleepers: Sendable {
        let count = Mutex((now: 0, most: 0))
    }
}
