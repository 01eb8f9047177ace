import Foundation
import LockstepApps
import LockstepClient
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// A server that drains closes its clients with 1001: the SDK reconnects at once, to the next address it was given.
@Suite(.timeLimit(.minutes(1))) struct GoingAwayTests {
    /// The backoff is twenty seconds, so only the 1001 rule can bring the client to the second server sooner.
    @Test func aClientMovesToTheNextServerAtOnceWhenItsServerDrains() async throws {
        let first = try makeServer(app: .counter)
        let second = try makeServer(app: .counter)
        defer { second.shutdown() }
        // The second server's room is ahead, so the client's state tells where it is.
        let other = try RoomClient(url: roomURL(second, "move"))
        try await other.connect()
        for _ in 0..<5 { try await other.send(action: ["type": "increment"]) }
        await other.close()

        let slowRetry = ReconnectPolicy(initialDelay: .seconds(20), maxDelay: .seconds(20), jitter: 0)
        let client = try RoomClient(urls: [roomURL(first, "move"), roomURL(second, "move")], reconnect: slowRetry)
        try await client.connect()
        #expect(try await client.send(action: ["type": "increment"]) == 1)

        let drained = ContinuousClock.now
        await first.drain()
        try await offThePool { first.shutdown() }
        while await client.state["count"]?.intValue != 5, ContinuousClock.now - drained < .seconds(20) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(await client.state["count"]?.intValue == 5)
        // Its backoff is 20 s: a client that waited for it would not be back before then, however loaded the machine.
        #expect(ContinuousClock.now - drained < .seconds(20), "the client waited for its backoff")
        #expect(try await client.send(action: ["type": "increment"]) == 6)
        await client.close()
    }

    /// Requests a draining server has read are answered before it says goodbye; with a session the client sends the
    /// rest again to the next server, and each is applied once.
    @Test func requestsInFlightDuringADrainAreAppliedOnce() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-going-away-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try makeServer(app: .counter, dataDirectory: directory)
        let port = first.port
        let client = try RoomClient(url: roomURL(first, "once"), reconnect: quickRetry)
        try await client.connect()
        let sends = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 { group.addTask { try await client.send(action: ["type": "increment"]) } }
                return try await group.reduce(0) { count, _ in count + 1 }
            }
        }
        // The drain begins among the sends; however many the first server read by then, each applies once.
        try await Task.sleep(for: .milliseconds(5))
        await first.drain()
        try await offThePool { first.shutdown() }
        // The same address again, as a restarted server (or a proxy's next one) would answer it.
        let second = try makeServer(app: .counter, port: port, dataDirectory: directory)
        defer { second.shutdown() }
        #expect(try await sends.value == 200)
        #expect(await client.state["count"]?.intValue == 200)
        await client.close()
    }
}
