import Clocks
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import Testing
import LockstepTestSupport

/// A sender past `--rate-limit` is read more slowly; nothing it sent is dropped.
@Suite(.timeLimit(.minutes(1))) struct FastSenderTests {
    @Test func aSenderPastTheRateLimitIsSlowedAndLosesNothing() async throws {
        try await withServer(configure: { $0.rateLimit = 200 }) { server in
            let sender = try await TestClient.connect(server, using: sharedTransport)
            let other = try await TestClient.connect(server, using: sharedTransport)
            // One second's burst, then four seconds at the limit.
            let total = 1_000
            for index in 1...total { sender.send(.action(id: "a\(index)", action: ["type": "increment"])) }

            // Another client is served while the sender is still being held back.
            other.send(.action(id: "other", action: ["type": "increment"]))
            guard case .ack(_, let otherVersion) = try await other.next(where: { $0.isAck }) else { return }
            #expect(otherVersion < total, "the other client waited for the whole flood")

            var acked = 0
            while acked < total {
                switch try await sender.next(timeout: .seconds(20)) {
                case .ack: acked += 1
                case .error(let id, let code, let message):
                    Issue.record("error \(code) for \(id ?? "-"): \(message)")
                    return
                default: break
                }
            }
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["state"]?["count"] == .int(total + 1))
            let metrics = try await HTTPGet(port: server.port, path: "/metrics").text
            #expect(metrics.contains("lockstep_throttled_total"))
            #expect(!metrics.contains("lockstep_throttled_total 0\n"))
        }
    }

    /// The budget refills as the server's clock runs: with `--rate-limit 2`, two actions go through, then each half
    /// second on a test clock (which stands still otherwise) brings back one more, and no others.
    ///
    /// Each step waits until the throttled sender's pause sleeps on the clock, so that the step wakes it: the server
    /// reads on a thread of its own, and a step taken while it was still reading would not be the one its pause
    /// waits for.
    @Test func theBudgetRefillsOnTheServersClock() async throws {
        let clock = TestClock()
        try await withServer(clock: ServerClock(clock), configure: { $0.rateLimit = 2 }) { server in
            let follower = try await TestClient.connect(server, using: sharedTransport)
            let sender = try await TestClient.connect(server, using: sharedTransport)
            for index in 1...6 { sender.send(.action(id: "a\(index)", action: ["type": "increment"])) }
            try await follower.catchUp(to: 2)

            for version in 3...4 {
                try await waitForATimer(on: clock)
                await clock.advance(by: .milliseconds(500))
                try await follower.catchUp(to: version)
            }
            try await waitForATimer(on: clock)
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["version"] == 4, "a test clock that stands still refills nothing")
        }
    }
}
