import Clocks
import Glibc
import Foundation
import LockstepApps
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

extension ClientProcess {
    /// All lines until the process ends (bounded), and its exit status.
    func finish(within seconds: Double = 30) async throws -> (lines: [JSON], status: Int32) {
        let lines = self.lines
        let collected = try await within(seconds, "lockstep-client to exit") {
            var all: [JSON] = []
            for await line in lines { all.append(line) }
            return all
        }
        return (collected, child.waitForExit())
    }
}

@Suite(.timeLimit(.minutes(1)))
struct ExecutableTests {
    @Test func execRunsCommandsAndPrintsEveryUpdateAsJSON() async throws {
        try await withServer(app: .counter) { server in
            // Bob reads commands from a pipe (not a TTY) and prints what alice does.
            let bob = try ClientProcess(arguments: [roomURL(server, "cli"), "--name", "bob"])
            let bobLines = bob.lines
            // Alice starts only once bob is in the room, or bob could join after her changes.
            _ = try await within(30, "bob to join") {
                for await line in bobLines where line["event"] == "snapshot" { return true }
                return false
            }
            let alice = try ClientProcess(arguments: [
                roomURL(server, "cli"), "--name", "alice", "--exec", "+; add 4; undo; history 2; bogus",
            ])
            let (lines, status) = try await alice.finish()
            #expect(status == 2, "a refused command makes the exit status 2")
            let events = lines.compactMap { $0["event"]?.stringValue }
            #expect(events.first == "snapshot")
            let patches = lines.filter { $0["event"] == "patch" }
            #expect(patches.compactMap { $0["version"]?.intValue } == [1, 2, 3])
            #expect(patches.last?["state"] == ["count": 1])
            #expect(patches.first?["changed"] == ["/count"])
            #expect(patches.last?["cause"]?["kind"] == "undo")
            let acks = lines.filter { $0["event"] == "ack" }
            #expect(acks.map { $0["command"] } == ["+", "add 4", "undo"])
            #expect(acks.map { $0["version"] } == [1, 2, 3])
            // Each ack follows its patch.
            let ackIndex = try #require(lines.firstIndex { $0["event"] == "ack" })
            let patchIndex = try #require(lines.firstIndex { $0["event"] == "patch" })
            #expect(patchIndex < ackIndex)
            #expect(lines.first { $0["event"] == "history" }?["entries"]?.arrayValue?.count == 2)
            #expect(lines.contains { $0["event"] == "error" && $0["command"] == "bogus" && $0["code"] == "usage" })

            // Bob saw the same three versions; closing his stdin ends him with status 0.
            let seen = try await within(30, "bob to see version 3") {
                var versions: [Int] = []
                for await line in bobLines where line["event"] == "patch" {
                    versions.append(line["version"]?.intValue ?? -1)
                    if versions.count == 3 { return versions }
                }
                return versions
            }
            #expect(seen == [1, 2, 3])
            bob.child.closeInput()
            let (_, bobStatus) = try await bob.finish()
            #expect(bobStatus == 0)
        }
    }

    @Test func stdinCommandsForTodosAndServerErrors() async throws {
        try await withServer(app: .todos) { server in
            let client = try ClientProcess(arguments: [roomURL(server, "todo-cli")])
            let commands = "add milk\nadd bread\ntoggle 1\nrename 2 rye bread\ntoggle 9\nquit\nadd never\n"
            client.child.write(Array(commands.utf8))
            let (lines, status) = try await client.finish()
            #expect(status == 2)
            let error = try #require(lines.first { $0["event"] == "error" })
            #expect(error["code"] == "rejected")
            #expect(error["message"] == "no todo with id 9")
            let last = try #require(lines.last { $0["event"] == "patch" })
            #expect(last["version"] == 4)
            #expect(
                last["state"]?["items"] == [
                    ["id": 1, "title": "milk", "done": true], ["id": 2, "title": "rye bread", "done": false],
                ])
            #expect(try await fetchRoom(port: server.port, room: "todo-cli").version == 4)
        }
    }

    @Test func jsonAppCommandsBecomePatches() async throws {
        try await withServer(app: .json) { server in
            let client = try ClientProcess(arguments: [
                roomURL(server, "doc"), "--exec",
                "set /title hello world; set /n 41; inc /n; add /tags [\"a\"]; remove /title",
            ])
            let (lines, status) = try await client.finish()
            #expect(status == 0)
            #expect(lines.last { $0["event"] == "patch" }?["state"] == ["n": 42, "tags": ["a"]])
            #expect(try await fetchRoom(port: server.port, room: "doc").state == ["n": 42, "tags": ["a"]])
        }
    }

    @Test func pathFollowsPartOfTheRoom() async throws {
        try await withServer(app: .json) { server in
            let client = try ClientProcess(arguments: [
                roomURL(server, "part"), "--path", "/board", "--exec",
                "set /board {\"n\":1}; set /other 5; inc /board/n; view 1; bogus-path-free",
            ])
            let (lines, status) = try await client.finish()
            #expect(status == 2, "the last command is unknown")
            #expect(lines.first { $0["event"] == "snapshot" }?["state"] == .null)
            let patches = lines.filter { $0["event"] == "patch" }
            // Version 2 (/other) does not touch the view: its ack comes without a patch.
            #expect(patches.compactMap { $0["version"]?.intValue } == [1, 3])
            #expect(patches.first?["ops"] == [["op": "replace", "path": "", "value": ["n": 1]]])
            #expect(patches.last?["state"] == ["n": 2])
            #expect(patches.last?["changed"] == ["/n"])
            let acks = lines.filter { $0["event"] == "ack" }
            #expect(acks.map { $0["version"] } == [1, 2, 3])
            let view = try #require(lines.first { $0["event"] == "view" })
            #expect(view["state"] == ["n": 1])
            #expect(try await fetchRoom(port: server.port, room: "part").state == ["board": ["n": 2], "other": 5])
        }
    }

    @Test func revertViewAndLogLookBackInTime() async throws {
        try await withServer(app: .counter) { server in
            let client = try ClientProcess(arguments: [
                roomURL(server, "past"), "--exec", "add 5; add 2; view 1; revert 1; log 2; view 9; revert x",
            ])
            let (lines, status) = try await client.finish()
            #expect(status == 2, "view 9 and revert x fail")
            let view = try #require(lines.first { $0["event"] == "view" })
            #expect(view["version"] == 1)
            #expect(view["state"] == ["count": 5])
            let revert = try #require(lines.last { $0["event"] == "patch" })
            #expect(revert["version"] == 3)
            #expect(revert["cause"]?["kind"] == "revert")
            #expect(revert["cause"]?["to"] == 1)
            #expect(revert["state"] == ["count": 5])
            let log = try #require(lines.first { $0["event"] == "history" })
            #expect(log["entries"]?.arrayValue?.compactMap { $0["version"]?.intValue } == [2, 3])
            var failed: [String] = []
            for line in lines where line["event"]?.stringValue == "error" {
                failed.append(line["command"]?.stringValue ?? "?")
            }
            #expect(failed == ["view 9", "revert x"])
            #expect(try await fetchRoom(port: server.port, room: "past").version == 3)
        }
    }

    /// Given several addresses, the client tries them in turn: the first server is gone, the second takes it.
    @Test func severalAddressesAreTriedInTurn() async throws {
        let gone = try await withServer(app: .counter) { $0.port }
        try await withServer(app: .counter) { server in
            let client = try ClientProcess(arguments: [
                "ws://127.0.0.1:\(gone)/rooms/turn", roomURL(server, "turn"), "--exec", "+; +",
            ])
            let (_, status) = try await client.finish()
            #expect(status == 0)
            #expect(try await fetchRoom(port: server.port, room: "turn").version == 2)
        }
    }

    /// The same `--session` in a later run owns the earlier run's changes: `undo mine` takes back alice's +1 from her
    /// first run, after bob's add, and leaves his.
    @Test func undoMineAndRedoMineActOnTheSessionsOwnChanges() async throws {
        try await withServer(app: .counter) { server in
            let url = roomURL(server, "own")
            let first = try ClientProcess(arguments: [url, "--name", "alice", "--session", "alice-1", "--exec", "+"])
            #expect(try await first.finish().status == 0)
            let bob = try ClientProcess(arguments: [url, "--name", "bob", "--exec", "add 10"])
            #expect(try await bob.finish().status == 0)
            let alice = try ClientProcess(arguments: [
                url, "--name", "alice", "--session", "alice-1", "--exec",
                "undo mine; redo mine; undo mine; undo mine; undo yours",
            ])
            let (lines, status) = try await alice.finish()
            #expect(status == 2)
            let patches = lines.filter { $0["event"] == "patch" }
            #expect(patches.compactMap { $0["state"]?["count"]?.intValue } == [10, 11, 10])
            #expect(patches.map { $0["cause"]?["mine"] } == [true, true, true])
            #expect(patches.map { $0["cause"]?["of"] } == [1, 1, 1])
            #expect(patches.map { $0["cause"]?["name"] } == ["alice", "alice", "alice"])
            #expect(patches.allSatisfy { $0["cause"]?["at"]?.intValue != nil })
            let errors = lines.filter { $0["event"] == "error" }
            #expect(errors.map { $0["command"] } == ["undo mine", "undo yours"])
            #expect(errors.map { $0["code"] } == ["nothing_to_undo", "usage"])
            #expect(try await fetchRoom(port: server.port, room: "own").state == ["count": 10])
        }
    }

    /// `later` has the server apply an action later, as this client's, even after the client has gone; `timers` lists
    /// what is pending and `cancel` takes a timer away.
    @Test func laterSchedulesAnActionTimersListsAndCancelTakesAway() async throws {
        let clock = TestClock()
        let start = 1_000_000
        try await withServer(
            app: .counter, clock: ServerClock(clock, startingAt: start), configure: { $0.presenceInterval = .zero }
        ) { server in
            let client = try ClientProcess(arguments: [
                roomURL(server, "later"), "--name", "alice", "--exec",
                "later 30 as turn +; later 60 add 5; timers; cancel turn; timers; later x +; later 5 undo; cancel",
            ])
            let (lines, status) = try await client.finish()
            #expect(status == 2, "the last three commands are refused")
            let scheduled = lines.filter { $0["event"] == "scheduled" }
            #expect(scheduled.map { $0["command"] } == ["later 30 as turn +", "later 60 add 5"])
            #expect(scheduled.first?["timer"] == "turn")
            #expect(scheduled.map { $0["due"] } == [.int(start + 30_000), .int(start + 60_000)])
            let listings = lines.filter { $0["event"] == "timers" }.map { $0["timers"]?.arrayValue ?? [] }
            #expect(listings.map(\.count) == [2, 1])
            #expect(listings.first?.first?["timer"] == "turn")
            #expect(listings.first?.first?["name"] == "alice")
            #expect(listings.last?.first?["action"] == ["type": "add", "amount": 5])
            #expect(lines.contains { $0["event"] == "cancelled" && $0["timer"] == "turn" })
            let errors = lines.filter { $0["event"] == "error" }
            #expect(errors.map { $0["command"] } == ["later x +", "later 5 undo", "cancel"])
            #expect(errors.allSatisfy { $0["code"] == "usage" })
            #expect(try await fetchRoom(port: server.port, room: "later").version == 0, "nothing applied yet")

            // The client has gone; the server applies its timer when it is due.
            // A timer is due at a time, not after a wait: the server's clock may move on before it arms its wait.
            await clock.advance(by: .seconds(60))
            try await waitUntil("the timer to fire", within: 60) {
                try await fetchRoom(port: server.port, room: "later").state == ["count": 5]
            }
        }
    }

    /// On a terminal the prompt says when a line is being edited: its presence state is `{"typing":true}` until the
    /// line is sent or emptied, and the screen names the others who are typing.
    @Test func theTerminalPromptSharesTypingAndShowsWhoElseTypes() async throws {
        try await withServer(app: .counter) { server in
            let url = roomURL(server, "typing")
            let alice = try RoomClient(url: url, name: "alice")
            try await alice.connect()
            let bob = try TerminalClient(arguments: [url, "--name", "bob"])
            defer { bob.end() }
            @Sendable func bobsState() async -> JSON? { await alice.peers.first { $0.name == "bob" }?.state }
            try await waitUntil("bob to join") { await alice.peers.contains { $0.name == "bob" } }
            try await waitUntil("bob's screen to show the room") { bob.lastFrame.contains("alice") }

            bob.type("ad")
            try await waitUntil("bob to be typing") { await bobsState() == ["typing": true] }
            bob.type("\u{7F}\u{7F}")
            try await waitUntil("an emptied line to clear it") { await bobsState() == nil }
            bob.type("+")
            try await waitUntil("bob to be typing again") { await bobsState() == ["typing": true] }
            bob.type("\r")
            try await waitUntil("a sent line to clear it") { await bobsState() == nil }
            try await waitUntil("bob's + to apply") { await alice.state == ["count": 1] }

            try await alice.setPresence(["typing": true])
            try await waitUntil("bob's screen to say alice is typing") { bob.lastFrame.contains("alice is typing") }
            try await alice.setPresence(nil)
            try await waitUntil("bob's screen to stop saying so") { !bob.lastFrame.contains("is typing") }

            bob.type("later 600 as nap +\r")
            try await waitUntil("bob's timer") {
                try await HTTPGet(port: server.port, path: "/rooms/typing/timers").json?["timers"]?.arrayValue?.first?["timer"]
                    == "nap"
            }
            bob.type("timers\r")
            // Due in 600 s, less the moments since: 10m00s, or 9m5Xs on a slow machine.
            try await waitUntil("bob's screen to list it") {
                bob.lastFrame.contains("nap in 10m00s") || bob.lastFrame.contains("nap in 9m5")
            }
            #expect(try await bob.quit() == 0)
            await alice.close()
        }
    }

    @Test func connectionFailureExitsNonZero() async throws {
        let port = try await withServer(app: .counter) { $0.port }
        let client = try ClientProcess(arguments: ["ws://127.0.0.1:\(port)/rooms/x", "--exec", "+"])
        let (lines, status) = try await client.finish()
        #expect(status == 1)
        #expect(lines.isEmpty)
    }
}
