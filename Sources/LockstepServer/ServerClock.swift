import FoundationEssentials

/// The server's sense of time: how long it has been running, and waiting.
///
/// Idle rooms, presence intervals, throttled senders, peer renewals and retries all read it, so a test can hand the
/// server a clock it advances itself (any `Clock` with `Duration`, such as swift-clocks' `TestClock`) rather than
/// sleeping. Session marks and tokens keep wall-clock time, since it must mean the same after a restart.
public struct ServerClock: Sendable {
    private let elapsed: @Sendable () -> Duration
    /// Waits until the clock has run the given time since `start`.
    private let sleeper: @Sendable (Duration) async throws -> Void
    private let wall: @Sendable () -> Int

    /// Time as `clock` tells it; the time of changes (`cause.at`) is the system's, or, given `epochMilliseconds`,
    /// that instant plus the time `clock` has run.
    public init<C: Clock>(_ clock: C, startingAt epochMilliseconds: Int? = nil) where C.Duration == Duration {
        let start = clock.now
        let elapsed: @Sendable () -> Duration = { start.duration(to: clock.now) }
        self.elapsed = elapsed
        sleeper = { try await clock.sleep(until: start.advanced(by: $0), tolerance: nil) }
        if let epochMilliseconds {
            wall = { epochMilliseconds + Int(elapsed() / .milliseconds(1)) }
        } else {
            wall = { Int((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
        }
    }

    /// Real time, never going back.
    public static var continuous: ServerClock { ServerClock(ContinuousClock()) }

    /// How long the clock has run since the server started.
    var now: Duration { elapsed() }

    /// Wall-clock time in milliseconds since the Unix epoch: when a change is applied.
    var epochMilliseconds: Int { wall() }

    /// Waits `duration`; throws when the waiting task is cancelled.
    func sleep(for duration: Duration) async throws {
        try await sleeper(now + duration)
    }

    /// Waits until the clock has run `deadline` (a time as ``now`` tells it); returns at once when it has.
    ///
    /// A deadline taken when something is decided stays right however late the waiting task starts: a test that
    /// advances the clock in between does not leave it waiting for a time that will never come.
    func sleep(until deadline: Duration) async throws {
        guard deadline > now else { return }
        try await sleeper(deadline)
    }
}
