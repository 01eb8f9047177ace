/// How fast a client retries after a drop: quick after a blip, backing off exponentially (with jitter, so a
/// restarted server is not hit by every client at once) up to a bound, so it never gives up nor spins.
public struct ReconnectPolicy: Sendable, Equatable {
    /// Delay before the first retry.
    public var initialDelay: Duration
    /// Longest delay between two attempts.
    public var maxDelay: Duration
    /// Fraction of each delay that is random (0: none; 0.5: between half and the whole delay).
    public var jitter: Double

    /// A policy from `initialDelay` doubling up to `maxDelay`; `jitter` is clamped to 0...1.
    public init(initialDelay: Duration = .milliseconds(100), maxDelay: Duration = .seconds(5), jitter: Double = 0.5) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The delay before the next attempt after `failures` consecutive failures (1 or more).
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(failures, 1) where delay < maxDelay { delay *= 2 }
        delay = min(delay, maxDelay)
        return delay * (1 - jitter * Double.random(in: 0..<1))
    }
}
