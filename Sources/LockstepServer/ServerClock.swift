/// The server's sense of time: how long it has been running, and waiting.
///
/// Idle rooms, presence intervals, throttled senders, peer renewals and retries all read it, so a test can hand the
/// server a clock it advances itself (any `Clock` with `Duration`, such as swift-clocks' `TestClock`) rather than
/// sleeping. Session marks and tokens keep wall-clock time, since it must mean the same after a restart.
public struct ServerClock: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// Time as `clock` tells it.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleeper = { try await clock.sleep(for: $0) }
    }

    /// Real time, never going back.
    public static var continuous: ServerClock { ServerClock(ContinuousClock()) }

    /// How long the clock has run since the server started.
    var now: Duration { elapsed() }

    /// Waits `duration`; throws when the waiting task is cancelled.
    func sleep(for duration: Duration) async throws {
        try await sleeper(duration)
    }
}
