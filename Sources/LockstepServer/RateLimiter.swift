/// A token bucket: `rate` messages a second, bursts up to one second's worth.
struct RateLimiter {
    private let rate: Double
    private var tokens: Double
    private var refilled: ContinuousClock.Instant

    init(perSecond rate: Int, now: ContinuousClock.Instant = .now) {
        self.rate = Double(rate)
        tokens = Double(rate)
        refilled = now
    }

    /// Takes one token if there is one; false means the message must be dropped.
    mutating func allow(now: ContinuousClock.Instant = .now) -> Bool {
        guard rate > 0 else { return true }
        let elapsed = refilled.duration(to: now)
        refilled = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        tokens = min(rate, tokens + seconds * rate)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
