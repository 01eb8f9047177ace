import Clocks
import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Timers (1.3): an action with `after` is applied later by the server, as its sender; on the server's clock, which
/// the tests advance.
@Suite(.timeLimit(.minutes(3))) struct TimerTests {
    static let start = 1_000_000

    /// A server on a clock the test moves; presence goes out at once, so only timers sleep on it.
    func withTimedServer(
        directory: String? = nil, configure: @escaping (inout ServerConfiguration) -> Void = { _ in },
        _ body: (SyncServer, TestClock<Duration>) async throws -> Void
    ) async throws {
        let clock = TestClock()
        try await withServer(app: .counter, clock: ServerClock(clock, startingAt: Self.start), directory: directory, configure: {
            $0.presenceInterval = .zero
            configure(&$0)
        }) { server in try await body(server, clock) }
    }

    @Test func aScheduledActionIsAppliedWhenDueAsItsSender() async throws {
        try await withTimedServer { server, clock in
            let alice = try await TestClient.connect(server, query: "name=alice", using: sharedTransport)
            _ = try await alice.nextJSON(type: "snapshot")
            alice.sendRaw(#"{"type":"action","id":"t1","action":{"type":"increment"},"after":30000,"timer":"turn"}"#)
            let scheduled = try await alice.nextJSON(type: "scheduled")
            #expect(scheduled == ["type": "scheduled", "id": "t1", "timer": "turn", "due": .int(Self.start + 30_000)])
            try await waitForATimer(on: clock)
            await clock.advance(by: .seconds(29))
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["version"] == 0)
            await clock.advance(by: .seconds(1))
            let patch = try await alice.nextJSON(type: "patch")
            #expect(patch["version"] == 1)
            let cause = try #require(patch["cause"])
            #expect(cause["kind"] == "timer")
            #expect(cause["timer"] == "turn")
            #expect(cause["client"] == "c1")
            #expect(cause["id"] == "t1")
            #expect(cause["name"] == "alice")
            #expect(cause["action"] == ["type": "increment"])
            #expect(cause["at"] == .int(Self.start + 30_000))
            let timers = try #require(try await HTTPGet(port: server.port, path: "/rooms/test/timers").json)
            #expect(timers == ["room": "test", "timers": []])
        }
    }

    @Test func timersDueTogetherApplyInTheOrderTheyWereScheduled() async throws {
        try await withTimedServer { server, clock in
            let client = try await TestClient.connect(server, using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            for (name, amount) in [("b", 2), ("a", 10), ("c", 100)] {
                client.sendRaw(#"{"type":"action","action":{"type":"add","amount":\#(amount)},"after":5000,"timer":"\#(name)"}"#)
                _ = try await client.nextJSON(type: "scheduled")
            }
            let listed = try #require(try await HTTPGet(port: server.port, path: "/rooms/test/timers").json)
            #expect(listed["timers"]?.arrayValue?.map { $0["timer"] } == ["b", "a", "c"])
            try await waitForATimer(on: clock)
            await clock.advance(by: .seconds(5))
            var timers: [JSON] = []
            for _ in 0..<3 { timers.append(try await client.nextJSON(type: "patch")["cause"]?["timer"] ?? .null) }
            #expect(timers == ["b", "a", "c"])
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"] == ["count": 112])
        }
    }

    @Test func aNameAgainReplacesItsTimerAndCancelTakesItAway() async throws {
        try await withTimedServer(configure: { $0.maxTimers = 2 }) { server, clock in
            let client = try await TestClient.connect(server, using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            client.sendRaw(#"{"type":"action","action":{"type":"add","amount":1},"after":1000,"timer":"x"}"#)
            _ = try await client.nextJSON(type: "scheduled")
            client.sendRaw(#"{"type":"action","action":{"type":"add","amount":7},"after":2000,"timer":"x"}"#)
            #expect(try await client.nextJSON(type: "scheduled")["due"] == .int(Self.start + 2000))
            client.sendRaw(#"{"type":"action","action":{"type":"add","amount":50},"after":1000,"timer":"y"}"#)
            _ = try await client.nextJSON(type: "scheduled")
            client.sendRaw(#"{"type":"action","id":"z","action":{"type":"increment"},"after":1000,"timer":"z"}"#)
            let refused = try await client.nextJSON(type: "error")
            #expect(refused["code"] == "rejected")
            #expect(refused["id"] == "z")
            client.sendRaw(#"{"type":"cancel","id":"c","timer":"y"}"#)
            #expect(try await client.nextJSON(type: "scheduled") == ["type": "scheduled", "id": "c", "timer": "y", "due": nil])
            client.sendRaw(#"{"type":"cancel","id":"d","timer":"never"}"#)
            #expect(try await client.nextJSON(type: "scheduled")["due"] == .null)
            try await waitForATimer(on: clock)
            await clock.advance(by: .seconds(2))
            let patch = try await client.nextJSON(type: "patch")
            #expect(patch["cause"]?["timer"] == "x")
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"] == ["count": 7])
        }
    }

    @Test func badTimersAreBadMessages() async throws {
        try await withTimedServer { server, _ in
            let client = try await TestClient.connect(server, using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            let bad = [
                #"{"type":"undo","after":10}"#,
                #"{"type":"action","action":{"type":"increment"},"after":-1}"#,
                #"{"type":"action","action":{"type":"increment"},"after":604800001}"#,
                #"{"type":"action","action":{"type":"increment"},"after":1.5}"#,
                #"{"type":"action","action":{"type":"increment"},"after":10,"timer":"no spaces"}"#,
                #"{"type":"action","action":{"type":"increment"},"timer":"t"}"#,
                #"{"type":"cancel"}"#,
            ]
            for text in bad {
                client.sendRaw(text)
                #expect(try await client.nextJSON(type: "error")["code"] == "bad_message", "\(text)")
            }
        }
    }

    @Test func aReadTokenMayNotScheduleAndUndoMineTakesBackATimersChange() async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        let reader = try await tokens.issue(room: "test", role: .read, lifetime: .seconds(300), subject: "r")
        let writer = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300), subject: "w")
        try await withTimedServer(configure: { $0.tokens = tokens }) { server, clock in
            let read = try await TestClient.connect(server, query: "token=\(reader)", using: sharedTransport)
            _ = try await read.nextJSON(type: "snapshot")
            read.sendRaw(#"{"type":"action","action":{"type":"increment"},"after":10}"#)
            #expect(try await read.nextJSON(type: "error")["code"] == "forbidden")
            read.sendRaw(#"{"type":"cancel","timer":"x"}"#)
            #expect(try await read.nextJSON(type: "error")["code"] == "forbidden")

            let write = try await TestClient.connect(server, query: "token=\(writer)&session=w1", using: sharedTransport)
            _ = try await write.nextJSON(type: "snapshot")
            write.sendRaw(#"{"type":"action","action":{"type":"add","amount":5},"after":1000,"timer":"later"}"#)
            _ = try await write.nextJSON(type: "scheduled")
            try await waitForATimer(on: clock)
            await clock.advance(by: .seconds(1))
            let fired = try await write.nextJSON(type: "patch")
            #expect(fired["cause"]?["sub"] == "w")
            write.sendRaw(#"{"type":"undo","id":"u","mine":true}"#)
            #expect(try await write.nextJSON(type: "ack")["version"] == 2)
            let room = try await HTTPGet(port: server.port, path: "/rooms/test", headers: ["Authorization: Bearer \(writer)"])
            #expect(room.json?["state"] == ["count": 0])
        }
    }

    @Test func overHTTPASchedulingAnswers202() async throws {
        try await withTimedServer { server, clock in
            let answer = try await HTTPGet.post(
                port: server.port, path: "/rooms/test?name=cron",
                json: #"{"type":"action","action":{"type":"increment"},"after":60000,"timer":"close"}"#)
            #expect(answer.status == 202)
            #expect(answer.json == ["room": "test", "timer": "close", "due": .int(Self.start + 60_000)])
            let listed = try #require(try await HTTPGet(port: server.port, path: "/rooms/test/timers").json)
            #expect(listed["timers"] == [["timer": "close", "due": .int(Self.start + 60_000), "client": "http", "name": "cron",
                                          "action": ["type": "increment"]]])
            let cancelled = try await HTTPGet.post(
                port: server.port, path: "/rooms/test", json: #"{"type":"cancel","timer":"close"}"#)
            #expect(cancelled.status == 202)
            #expect(cancelled.json?["due"] == .null)
            _ = clock
        }
    }

    @Test func aTimerFiresForARoomReleasedFromMemoryWhichLeavesAgain() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withTimedServer(directory: directory, configure: { $0.roomIdle = .seconds(10) }) { server, clock in
            let scheduled = try await HTTPGet.post(
                port: server.port, path: "/rooms/test",
                json: #"{"type":"action","action":{"type":"increment"},"after":86400000,"timer":"late"}"#)
            #expect(scheduled.status == 202)
            // The idle room leaves memory long before its timer is due (a day later).
            try await idle(clock, by: .seconds(10), untilEvictionsReach: 1, port: server.port)
            #expect(try await metric("lockstep_rooms", port: server.port) == 0)
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test/timers").json?["timers"]?.arrayValue?.count == 1)
            // That read read the room (it exists: its epoch went with its timer); it leaves again.
            try await idle(clock, by: .seconds(10), untilEvictionsReach: 2, port: server.port)
            #expect(try await metric("lockstep_rooms", port: server.port) == 0)
            // The timer loads it, applies its action and lets it go again.
            await clock.advance(by: .seconds(86_400))
            try await idle(clock, by: .seconds(10), untilEvictionsReach: 3, port: server.port)
            #expect(try await metric("lockstep_rooms", port: server.port) == 0)
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["state"] == ["count": 1])
            let log = try await HTTPGet(port: server.port, path: "/rooms/test/log?after=0").lines
            #expect(log.last?["cause"]?["timer"] == "late")
        }
    }

    /// Runs `body` on a server keeping its rooms in a new data directory (`round` 1), then on a server started again
    /// on that directory (`round` 2).
    func acrossARestart(_ body: (SyncServer, _ round: Int) async throws -> Void) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for round in 1...2 {
            try await withTimedServer(directory: directory) { server, _ in try await body(server, round) }
        }
    }

    /// A room used only to schedule a timer is a room: read at version 0, also once read back from the log.
    @Test func aRoomWithOnlyATimerIsReadAtVersionZeroAfterARestart() async throws {
        try await acrossARestart { server, round in
            if round == 1 {
                let scheduled = try await HTTPGet.post(
                    port: server.port, path: "/rooms/only-timer",
                    json: #"{"type":"action","action":{"type":"increment"},"after":86400000,"timer":"late"}"#)
                #expect(scheduled.status == 202)
            }
            let room = try await HTTPGet(port: server.port, path: "/rooms/only-timer")
            #expect(room.status == 200, "round \(round)")
            #expect(room.json?["version"] == 0)
            #expect(room.json?["state"] == ["count": 0])
            #expect(try await HTTPGet(port: server.port, path: "/rooms/only-timer/log").status == 200)
            let timers = try await HTTPGet(port: server.port, path: "/rooms/only-timer/timers")
            #expect(timers.json?["timers"]?.arrayValue?.count == 1)
        }
    }

    /// A cancel and a new timer of the same name, stored in one write: the log keeps the new one.
    @Test func aTimerCancelledAndScheduledAgainInOneWriteIsKept() async throws {
        try await acrossARestart { server, round in
            if round == 1 {
                let client = try await TestClient.connect(server, using: sharedTransport)
                _ = try await client.nextJSON(type: "snapshot")
                let schedule = #"{"type":"action","action":{"type":"increment"},"after":86400000,"timer":"t"}"#
                client.sendRaw(schedule)
                client.sendRaw(#"{"type":"cancel","id":"c","timer":"t"}"#)
                client.sendRaw(schedule)
                for _ in 1...3 { _ = try await client.nextJSON(type: "scheduled") }
            }
            let timers = try await HTTPGet(port: server.port, path: "/rooms/test/timers")
            #expect(timers.json?["timers"]?.arrayValue?.map { $0["timer"] } == ["t"], "round \(round)")
        }
    }

    @Test func aTimerFiresOnceAcrossKill9AndRestart() async throws {
        let directory = NSTemporaryDirectory() + "timers-kill-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory])
        let scheduled = try await HTTPGet.post(
            port: server.port, path: "/rooms/test",
            json: #"{"type":"action","action":{"type":"increment"},"after":1500,"timer":"once"}"#)
        #expect(scheduled.status == 202)
        server.kill9()
        let restarted = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory])
        defer { restarted.terminate() }
        try await within(30, "the timer to fire after the restart") {
            while try await HTTPGet(port: restarted.port, path: "/rooms/test").json?["version"] != 1 {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        // A later request lands right after the timer's change: it fired once.
        let next = try await HTTPGet.post(port: restarted.port, path: "/rooms/test", json: #"{"type":"action","action":{"type":"increment"}}"#)
        #expect(next.json?["version"] == 2)
        let log = try await HTTPGet(port: restarted.port, path: "/rooms/test/log?after=0").lines
        #expect(log.filter { $0["cause"]?["kind"] == "timer" }.count == 1)
        #expect(try await HTTPGet(port: restarted.port, path: "/rooms/test/timers").json?["timers"] == [])
    }

    /// Timers overdue when their room loads, as after a restart, apply in the order they came due, those due together
    /// in the order they were scheduled.
    @Test func overdueTimersApplyInDueOrderAfterARestart() async throws {
        let directory = NSTemporaryDirectory() + "timers-order-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory])
        // Scheduled latest first, so that due order is not scheduling order; pairs come due together.
        var scheduled: [(due: Int, name: String)] = []
        for number in 0..<60 {
            let body = #"{"type":"action","action":{"type":"add","amount":1},"after":\#(500 + (60 - number) * 40),"timer":"t\#(number)"}"#
            let answer = try await HTTPGet.post(port: server.port, path: "/rooms/test", json: body)
            scheduled.append((try #require(answer.json?["due"]?.intValue), "t\(number)"))
        }
        server.kill9()
        // Every timer is overdue when the server starts again.
        let lastDue = try #require(scheduled.map(\.due).max())
        while Int(Date().timeIntervalSince1970 * 1000) <= lastDue { try await Task.sleep(for: .milliseconds(20)) }
        let restarted = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory])
        defer { restarted.terminate() }
        // The recording holds what is stored: every timer's change, once all have fired.
        let fired = try await within(30, "the timers to fire after the restart") {
            while true {
                let log = try await HTTPGet(port: restarted.port, path: "/rooms/test/log?after=0").lines
                let fired = log.compactMap { $0["cause"]?["timer"]?.stringValue }
                if fired.count >= 60 { return fired }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let dueOrder = scheduled.enumerated().sorted { ($0.element.due, $0.offset) < ($1.element.due, $1.offset) }
        #expect(fired == dueOrder.map(\.element.name))
    }
}
