/// A token bucket: `rate` messages a second, bursts up to one second's worth.
///
/// It never drops a message: a connection that spends its budget is read more slowly (see `take`), so TCP holds the
/// sender back and nothing it sent is lost.
struct RateLimiter {
    private let rate: Double
    private var tokens: Double
    private var refilled: ContinuousClock.Instant

    /// Most pauses a second for one connection: a sender over its budget resumes once a fiftieth of a second's worth
    /// of tokens is back, not after each one, so throttling it costs a few timers a second.
    private static let resumesPerSecond = 50.0

    init(perSecond rate: Int, now: ContinuousClock.Instant = .now) {
        self.rate = Double(rate)
        tokens = Double(rate)
        refilled = now
    }

    /// Counts one message received; returns how long to stop reading before the next, or nil to read on.
    mutating func take(now: ContinuousClock.Instant = .now) -> Duration? {
        guard rate > 0 else { return nil }
        let elapsed = refilled.duration(to: now)
        refilled = now
        tokens = min(rate, tokens + elapsed.seconds * rate) - 1
        guard tokens < 1 else { return nil }
        let wanted = max(1, rate / Self.resumesPerSecond)
        return .seconds((wanted - tokens) / rate)
    }
}
