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

    /// A timer whose firing write is given up while another transaction holds the room's row (the database timeout)
    /// fires once the row is free: storage still lists it, and the server hands it to the room again.
    @Test func aTimerWhoseWriteWasGivenUpFiresOnceTheRoomIsFree() async throws {
        try await withCluster(nodes: 1, operationTimeout: .seconds(1)) { postgres, servers in
            let watcher = try await TestClient.connect(servers[0], room: "game", using: sharedTransport)
            _ = try await watcher.nextJSON(type: "snapshot")
            let scheduled = try await HTTPGet.post(
                port: servers[0].port, path: "/rooms/game",
                json: #"{"type":"action","action":{"type":"add","amount":7},"after":1500,"timer":"late"}"#)
            #expect(scheduled.status == 202, "\(scheduled.text)")
            // Another transaction holds the room's row from before the timer is due until the test ends it.
            let hold = "BEGIN; SELECT 1 FROM rooms WHERE room = 'game' FOR UPDATE; SELECT pg_sleep(60); COMMIT;"
            let holder = Task { try? await offThePool { try postgres.sql(hold) } }
            let sleeping = "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
            try await postgres.waitUntil("the other transaction to hold the room", sleeping, answers: "1")
            // The timer's write waits for the row, and the server gives it up (it then probes the database).
            let waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            try await postgres.waitUntil("the timer's write to wait for the row", waiting, answers: "1")
            try await within(30, "the server to give the write up") {
                while try await HTTPGet(port: servers[0].port, path: "/healthz").status == 200 {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            try await offThePool {
                try postgres.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep'")
            }
            _ = await holder.value
            let fired = try await watcher.nextJSON(type: "patch", timeout: .seconds(30))
            #expect(fired["cause"]?["timer"] == "late")
            let state = try await HTTPGet(port: servers[0].port, path: "/rooms/game").json
            #expect(state?["state"] == ["count": 7])
            #expect(try await HTTPGet(port: servers[0].port, path: "/rooms/game/timers").json?["timers"] == [])
        }
    }
}
