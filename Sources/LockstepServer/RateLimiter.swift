/// A token bucket: `rate` messages a second, bursts up to one second's worth.
///
/// It never drops a message: a connection that spends its budget is read more slowly (see `take`), so TCP holds the
/// sender back and nothing it sent is lost. Time is the server's clock (``ServerClock/now``), so a test advances it.
struct RateLimiter {
    private let rate: Double
    private var tokens: Double
    /// When tokens were last added, as the time the server's clock has run.
    private var refilled: Duration

    /// Most pauses a second for one connection: a sender over its budget resumes once a fiftieth of a second's worth
    /// of tokens is back, not after each one, so throttling it costs a few timers a second.
    private static let resumesPerSecond = 50.0

    init(perSecond rate: Int, now: Duration) {
        self.rate = Double(rate)
        tokens = Double(rate)
        refilled = now
    }

    /// Counts one message received at `now`; returns how long to stop reading before the next, or nil to read on.
    /// Without a limit the clock is not read.
    mutating func take(now: @autoclosure () -> Duration) -> Duration? {
        guard rate > 0 else { return nil }
        let now = now()
        let elapsed = now - refilled
        refilled = now
        tokens = min(rate, tokens + elapsed.seconds * rate) - 1
        guard tokens < 1 else { return nil }
        let wanted = max(1, rate / Self.resumesPerSecond)
        return .seconds((wanted - tokens) / rate)
    }
}
