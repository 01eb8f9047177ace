import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Timers on several servers: whichever server scheduled a timer, and whichever is still running when it comes due,
/// it is applied once.
@Suite(.timeLimit(.minutes(5)), .serialized, .postgresExclusive) struct ClusterTimerTests {
    @Test func aTimerScheduledThroughAServerThatStopsFiresOnceThroughTheOthers() async throws {
        try await withCluster(nodes: 3) { _, servers in
            let watcher = try await TestClient.connect(servers[2], room: "game", using: sharedTransport)
            _ = try await watcher.nextJSON(type: "snapshot")
            for n in 0..<5 {
                let scheduled = try await HTTPGet.post(
                    port: servers[0].port, path: "/rooms/game?name=ref",
                    json: #"{"type":"action","action":{"type":"add","amount":\#(1 << n)},"after":\#(1500 + 100 * n),"timer":"t\#(n)"}"#)
                #expect(scheduled.status == 202, "\(scheduled.text)")
            }
            let listed = try await HTTPGet(port: servers[1].port, path: "/rooms/game/timers").json
            #expect(listed?["timers"]?.arrayValue?.count == 5)
            servers[0].shutdown()
            var fired: [JSON] = []
            for _ in 0..<5 { fired.append(try await watcher.nextJSON(type: "patch", timeout: .seconds(30))["cause"] ?? .null) }
            #expect(fired.map { $0["timer"] } == ["t0", "t1", "t2", "t3", "t4"])
            #expect(fired.allSatisfy { $0["kind"] == "timer" && $0["name"] == "ref" })
            // Both running servers armed every timer; each was applied once.
            let state = try await HTTPGet(port: servers[1].port, path: "/rooms/game").json
            #expect(state?["state"] == ["count": 31])
            #expect(state?["version"] == 5)
            let log = try await HTTPGet(port: servers[2].port, path: "/rooms/game/log?after=0").lines
            #expect(log.filter { $0["cause"]?["kind"] == "timer" }.count == 5)
            #expect(try await HTTPGet(port: servers[2].port, path: "/rooms/game/timers").json?["timers"] == [])
        }
    }

    /// A cancel through another server than the one that scheduled the timer takes it away, though that server has
    /// not read the timer yet: the cancel removes its stored row, so no server fires it. A later timer fires, to show
    /// when the cancelled one would have.
    @Test func aCancelThroughAnotherServerTakesTheTimerAway() async throws {
        try await withCluster(nodes: 2) { _, servers in
            let watcher = try await TestClient.connect(servers[1], room: "game", using: sharedTransport)
            _ = try await watcher.nextJSON(type: "snapshot")
            for (name, amount, after) in [("gone", 1, 2_000), ("kept", 2, 3_000)] {
                let scheduled = try await HTTPGet.post(
                    port: servers[0].port, path: "/rooms/game?name=ref",
                    json: #"{"type":"action","action":{"type":"add","amount":\#(amount)},"after":\#(after),"timer":"\#(name)"}"#)
                #expect(scheduled.status == 202, "\(scheduled.text)")
            }
            let cancelled = try await HTTPGet.post(
                port: servers[1].port, path: "/rooms/game", json: #"{"type":"cancel","timer":"gone"}"#)
            #expect(cancelled.status == 202, "\(cancelled.text)")
            let fired = try await watcher.nextJSON(type: "patch", timeout: .seconds(30))
            #expect(fired["cause"]?["timer"] == "kept")
            let state = try await HTTPGet(port: servers[0].port, path: "/rooms/game").json
            #expect(state?["state"] == ["count": 2])
            #expect(state?["version"] == 1)
        }
    }
}
