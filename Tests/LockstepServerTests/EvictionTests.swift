import Clocks
import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepSQLite
import LockstepStorage
import Testing
import LockstepTestSupport

/// Idle rooms leave memory and come back, with a data directory, exactly as after a restart.
@Suite(.timeLimit(.minutes(3))) struct EvictionTests {
    /// A room taking requests over HTTP with no client becomes idle after each one: it keeps one wait for its idle
    /// limit, not one per request, and leaves once the limit has passed since the last.
    @Test func aRoomTakingManyHTTPRequestsKeepsOneIdleWait() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = CountingClock(TestClock())
        let configure = { (configuration: inout ServerConfiguration) in configuration.roomIdle = .seconds(60) }
        let increment = #"{"type":"action","action":{"type":"increment"}}"#
        try await withStoredServer(in: directory, clock: ServerClock(clock), configure: configure) { server in
            for round in 0..<4 {
                for _ in 0..<50 {
                    let answer = try await HTTPGet.post(port: server.port, path: "/rooms/busy", json: increment)
                    #expect(answer.status == 200)
                }
                // Later requests move the deadline on: 59 s after the last one it has not passed.
                if round < 3 { await clock.base.advance(by: .seconds(30)) }
            }
            #expect(clock.mostSleepers < 10, "\(clock.mostSleepers) tasks slept at once")
            await clock.base.advance(by: .seconds(59))
            #expect(try await metric("lockstep_evictions_total", port: server.port) == 0)
            try await idle(clock.base, by: .seconds(1), untilEvictionsReach: 1, port: server.port)
            #expect(try await HTTPGet(port: server.port, path: "/rooms/busy").json?["state"] == ["count": 200])
        }
    }

    /// The idle limit is read off the server's clock: advancing it, not waiting, lets the room go.
    @Test func anIdleRoomLeavesOnceTheServersClockPassesTheIdleLimit() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        // Presence goes out at once, so the only timer on the clock is the room's idle timer.
        let configure = { (configuration: inout ServerConfiguration) in
            configuration.roomIdle = .seconds(60)
            configuration.presenceInterval = .zero
        }
        try await withStoredServer(in: directory, clock: ServerClock(clock), configure: configure) { server in
            let client = try await TestClient.connect(server, room: "idle", using: sharedTransport)
            client.send(.action(id: "a", action: ["type": "increment"]))
            _ = try await client.next { $0 == .ack(id: "a", version: 1) }
            client.close()
            // The server saw the client leave and started the room's idle timer: the idle clock runs from here.
            try await waitForMetric("lockstep_connections", toReachAtMost: 0, port: server.port)
            try await waitForATimer(on: clock)
            await clock.advance(by: .seconds(59))
            #expect(try await metric("lockstep_evictions_total", port: server.port) == 0)
            #expect(try await metric("lockstep_rooms", port: server.port) == 1)
            await clock.advance(by: .seconds(1))
            try await waitForMetric("lockstep_evictions_total", toReach: 1, port: server.port)
            #expect(try await metric("lockstep_rooms", port: server.port) == 0)
            let stored = try #require(try await HTTPGet(port: server.port, path: "/rooms/idle").json)
            #expect(stored["state"] == ["count": 1])
        }
    }

    @Test func resumeHistoryUndoAndRedoWorkAcrossAnEviction() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        try await withStoredServer(
            in: directory, app: .todos, clock: ServerClock(clock), configure: { $0.roomIdle = .seconds(60) }
        ) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            for index in 1...5 {
                client.send(.action(id: "a\(index)", action: ["type": "add", "title": .string("t\(index)")]))
            }
            client.send(.undo(id: "u"))
            _ = try await client.next { $0 == .ack(id: "u", version: 6) }
            let before = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            client.close()
            try await idle(clock, by: .seconds(60), untilEvictionsReach: 1, port: server.port)
            #expect(try await metric("lockstep_rooms", port: server.port) == 0)

            // A read loads it and it leaves again.
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json == before)
            try await idle(clock, by: .seconds(60), untilEvictionsReach: 2, port: server.port)

            let resumed = try await TestClient.connect(server, query: "since=3", using: sharedTransport)
            #expect(try await resumed.next() == .resume(room: "test", you: "c2", version: 3))
            guard case .patch(4, _, let cause, _, _) = try await resumed.next() else {
                Issue.record("expected the patch of version 4")
                return
            }
            #expect(cause.kind == .action)
            resumed.send(.history(id: "h", limit: 3))
            let history = try await resumed.next { if case .history = $0 { true } else { false } }
            guard case .history(_, let entries) = history else { return }
            #expect(entries.map(\.version) == [4, 5, 6])
            resumed.send(.redo(id: "r"))
            _ = try await resumed.next { $0 == .ack(id: "r", version: 7) }
            resumed.send(.undo(id: "u1"))
            resumed.send(.undo(id: "u2"))
            _ = try await resumed.next { $0 == .ack(id: "u2", version: 9) }
            let after = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(after["state"]?["items"]?.arrayValue?.map { $0["title"] } == ["t1", "t2", "t3"])
        }
    }

    @Test func aRevertReachesBackAcrossAnEviction() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        try await withStoredServer(
            in: directory, app: .todos, clock: ServerClock(clock), configure: { $0.roomIdle = .seconds(60) }
        ) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            for index in 1...4 {
                client.send(.action(id: "a\(index)", action: ["type": "add", "title": .string("t\(index)")]))
            }
            _ = try await client.next { $0 == .ack(id: "a4", version: 4) }
            let atTwo = try #require(try await HTTPGet(port: server.port, path: "/rooms/test?version=2").json)
            client.close()
            try await idle(clock, by: .seconds(60), untilEvictionsReach: 1, port: server.port)

            let back = try await TestClient.connect(server, using: sharedTransport)
            back.send(.revert(id: "t", to: 2))
            _ = try await back.next { $0 == .ack(id: "t", version: 5) }
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["state"] == atTwo["state"])
            back.send(.undo(id: "u"))
            _ = try await back.next { $0 == .ack(id: "u", version: 6) }
            let undone = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(undone["state"]?["items"]?.arrayValue?.count == 4)
        }
    }

    @Test func aRoomInUseOrWithAWriteInFlightStays() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, configure: { $0.roomIdle = .milliseconds(100) }) { server in
            let stays = try await TestClient.connect(server, room: "busy", using: sharedTransport)
            let leaves = try await TestClient.connect(server, room: "quiet", using: sharedTransport)
            for index in 1...50 { leaves.send(.action(id: "q\(index)", action: ["type": "increment"])) }
            _ = try await leaves.next { $0 == .ack(id: "q50", version: 50) }
            leaves.close()
            try await waitForMetric("lockstep_evictions_total", toReach: 1, port: server.port)
            // A real wait, three idle limits long, in which the room in use must not leave.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await metric("lockstep_evictions_total", port: server.port) == 1)
            #expect(try await metric("lockstep_rooms", port: server.port) == 1)
            stays.send(.action(id: "b", action: ["type": "increment"]))
            _ = try await stays.next { $0 == .ack(id: "b", version: 1) }
            let quiet = try #require(try await HTTPGet(port: server.port, path: "/rooms/quiet").json)
            #expect(quiet["state"] == ["count": 50])
        }
        // The room left memory only after its snapshot was written.
        let log = try RoomLog(directory: directory, sync: .normal)
        defer { log.close() }
        #expect(try await log.load(room: "quiet")?.snapshot?.version == 50)
    }

    /// The memory a room used comes back once it idles out: a real server process visits two rounds of new rooms, and
    /// the second round leaves it no bigger than the first did.
    @Test func memoryFollowsTheRoomsInUseNotEveryRoomEverUsed() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(arguments: ["--data", directory, "--room-idle", "1s", "--app", "todos"])
        defer { server.terminate() }
        let rooms = 2_000
        var visited = 0
        var sizes: [Int] = []
        // A warm-up round (the database's and allocator's start), then two rounds measured.
        for round in [1_000, rooms, rooms] {
            try await visit(rooms: visited..<(visited + round), port: server.port)
            visited += round
            try await waitForMetric(
                "lockstep_evictions_total", toReach: visited, port: server.port, timeout: .seconds(60))
            #expect(try await metric("lockstep_rooms", port: server.port) == 0)
            sizes.append(try residentKiB(of: server.child.pid))
        }
        let perRoom = Double(sizes[2] - sizes[1]) / Double(rooms)
        print("RSS once idle: \(sizes) KiB; \(perRoom) KiB more per room visited in the last round")
        #expect(perRoom < 1.0, "RSS \(sizes) KiB")
        // Every room still answers, from the log.
        let last = try #require(try await HTTPGet(port: server.port, path: "/rooms/r\(visited - 1)").json)
        #expect(last["state"]?["items"]?.arrayValue?.count == 1)
    }

    /// Each room: join, add one item, leave; sixteen rooms at a time.
    private func visit(rooms: Range<Int>, port: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<16 {
                group.addTask {
                    for index in stride(from: rooms.lowerBound + lane, to: rooms.upperBound, by: 16) {
                        let client = try await TestClient.connect(port: port, room: "r\(index)", using: sharedTransport)
                        client.send(.action(id: "a", action: ["type": "add", "title": "one"]))
                        _ = try await client.next { $0.isAck }
                        client.close()
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    private func residentKiB(of pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { throw RawSocketError.failed("no VmRSS for \(pid)") }
        return kib
    }
}

/// The value of an unlabelled metric from `GET /metrics`.
func metric(_ name: String, port: Int) async throws -> Int {
    let text = try await HTTPGet(port: port, path: "/metrics").text
    for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
        return Int(Double(line.dropFirst(name.count + 1)) ?? -1)
    }
    return 0
}

/// Waits until something sleeps on `clock`, such as a room's idle timer, started once nobody uses the room.
func waitForATimer(on clock: TestClock<Duration>) async throws {
    try await within(60, "a timer on the server's clock") {
        while await !somethingSleeps(on: clock) { try await Task.sleep(for: .milliseconds(10)) }
    }
}

/// Moves `clock` on by `step` (a room's idle limit) each time something sleeps on it, until the server has evicted
/// `count` rooms in all. A room's idle timer starts once its last client has left and its last read is answered, and
/// again when a write was still in flight as it ran; the test sees neither, only the timer.
func idle(_ clock: TestClock<Duration>, by step: Duration, untilEvictionsReach count: Int, port: Int) async throws {
    try await within(60, "\(count) evictions") {
        while try await metric("lockstep_evictions_total", port: port) < count {
            if await somethingSleeps(on: clock) {
                await clock.advance(by: step)
            } else {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }
}

/// Polls `/metrics` until `name` is at least `value`; fails the test after `timeout`, an upper bound generous for a
/// loaded machine.
func waitForMetric(_ name: String, toReach value: Int, port: Int, timeout: Duration = .seconds(60)) async throws {
    try await waitForMetric(name, port: port, timeout: timeout, "below \(value)") { $0 >= value }
}

/// Polls `/metrics` until `name` is at most `value`; fails the test after `timeout`.
func waitForMetric(_ name: String, toReachAtMost value: Int, port: Int, timeout: Duration = .seconds(60)) async throws {
    try await waitForMetric(name, port: port, timeout: timeout, "above \(value)") { $0 <= value }
}

/// A read of `/metrics` that fails (a server out of descriptors refusing it) counts as not reached yet.
private func waitForMetric(
    _ name: String, port: Int, timeout: Duration, _ failure: String, until reached: (Int) -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !((try? await metric(name, port: port)).map(reached) ?? false) {
        guard ContinuousClock.now < deadline else {
            Issue.record("\(name) stayed at \(try await metric(name, port: port)), \(failure)")
            throw TestClientError.timedOut
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}
