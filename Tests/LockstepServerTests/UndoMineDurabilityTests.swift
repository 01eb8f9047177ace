import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Undo mine holds where the room goes: a `kill -9` restart (from the log and from snapshots) and other servers on
/// one PostgreSQL, since authors and compensations are kept with the changes.
@Suite(.timeLimit(.minutes(3))) struct UndoMineDurabilityTests {
    @Test func aSessionTakesBackItsChangesAfterAKill9Restart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = ["--app", "todos", "--data", directory]
        let server = try await ServerProcess.start(arguments: arguments)
        let alice = try await Writer.connect(server.port, session: "alice-phone")
        let bob = try await Writer.connect(server.port)
        try await alice.action(#"{"type":"add","title":"milk"}"#, seq: 1)
        try await bob.action(#"{"type":"add","title":"bread"}"#)
        try await alice.action(#"{"type":"toggle","id":1}"#, seq: 2)
        try await bob.action(#"{"type":"rename","id":2,"title":"rye"}"#)
        server.kill9()

        let restarted = try await ServerProcess.start(arguments: arguments)
        defer { restarted.terminate() }
        let back = try await Writer.connect(restarted.port, session: "alice-phone")
        let untoggle = try await back.change(#"{"type":"undo","mine":true,"seq":3}"#)
        #expect(untoggle["cause"]?["of"] == 3)
        #expect(try await roomState(restarted.port) == [
            "items": [["id": 1, "title": "milk", "done": false], ["id": 2, "title": "rye", "done": false]],
            "nextId": 3,
        ])
        try await back.undoMine(seq: 4)
        #expect(try await UndoMineAppsTests.titles(restarted.port) == ["rye"])
        try await back.ask(#"{"type":"redo","mine":true,"seq":5}"#)
        #expect(try await UndoMineAppsTests.titles(restarted.port) == ["milk", "rye"])
        // Bob's connection ended with the old process: a new connection is someone else.
        let newBob = try await Writer.connect(restarted.port)
        #expect(try await newBob.undoMine()["code"] == "nothing_to_undo")
    }

    @Test func authorsAndCompensationsAreKeptInSnapshots() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configure: (inout ServerConfiguration) -> Void = { $0.snapshotInterval = 2 }
        try await withStoredServer(in: directory, app: .todos, configure: configure) { server in
            let alice = try await Writer.connect(server.port, session: "alice")
            let bob = try await Writer.connect(server.port, session: "bob")
            try await alice.action(#"{"type":"add","title":"milk"}"#, seq: 1)
            try await bob.action(#"{"type":"add","title":"bread"}"#, seq: 1)
            try await alice.action(#"{"type":"remove","id":2}"#, seq: 2)
            try await alice.undoMine(seq: 3)
            try await bob.action(#"{"type":"toggle","id":2}"#, seq: 2)
        }
        try await withStoredServer(in: directory, app: .todos, configure: configure) { server in
            let alice = try await Writer.connect(server.port, session: "alice")
            // Her remove is taken back already; redo mine removes bread again, then undo mine walks to milk.
            try await alice.ask(#"{"type":"redo","mine":true,"seq":4}"#)
            #expect(try await UndoMineAppsTests.titles(server.port) == ["milk"])
            try await alice.undoMine(seq: 5)
            try await alice.undoMine(seq: 6)
            #expect(try await roomState(server.port)?["items"] == [["id": 2, "title": "bread", "done": true]])
        }
    }
}

@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct UndoMineClusterTests {
    @Test func aSessionTakesBackOnOneServerWhatItDidThroughAnother() async throws {
        try await withCluster(nodes: 2, app: .todos) { _, servers in
            let alice = try await Writer.connect(servers[0].port, session: "alice")
            let bob = try await Writer.connect(servers[1].port)
            try await alice.action(#"{"type":"add","title":"milk"}"#, seq: 1)
            try await bob.action(#"{"type":"add","title":"bread"}"#)
            try await alice.action(#"{"type":"rename","id":1,"title":"oat milk"}"#, seq: 2)
            alice.close()

            let moved = try await Writer.connect(servers[1].port, session: "alice")
            let undo = try await moved.change(#"{"type":"undo","mine":true,"seq":3}"#)
            #expect(undo["cause"]?["of"] == 3)
            try await moved.undoMine(seq: 4)
            let room = try #require(try await ClusterTests.room("test", port: servers[0].port, at: 5))
            #expect(room["state"]?["items"] == [["id": 2, "title": "bread", "done": false]])
            // And back on the first server, redo mine re-applies what the second took back.
            let home = try await Writer.connect(servers[0].port, session: "alice")
            try await home.ask(#"{"type":"redo","mine":true,"seq":5}"#)
            let after = try #require(try await ClusterTests.room("test", port: servers[1].port, at: 6))
            #expect(after["state"]?["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue } == ["milk", "bread"])
        }
    }

    @Test func theTimeOfChangesNeverGoesDownAcrossServersWhoseClocksDisagree() async throws {
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let ahead = Int(Date().timeIntervalSince1970 * 1000) + 3_600_000
        let fast = try await clusterNode(
            on: postgres, app: .counter, operationTimeout: .seconds(20),
            clock: ServerClock(ContinuousClock(), startingAt: ahead))
        defer { fast.shutdown() }
        let slow = try await clusterNode(on: postgres, app: .counter, operationTimeout: .seconds(20))
        defer { slow.shutdown() }
        let first = try await Writer.connect(fast.port)
        let second = try await Writer.connect(slow.port)
        let early = try await first.change(#"{"type":"action","action":{"type":"increment"}}"#)["cause"]?["at"]
        let late = try await second.change(#"{"type":"action","action":{"type":"increment"}}"#)["cause"]?["at"]
        let (aheadAt, nextAt) = (try #require(early?.intValue), try #require(late?.intValue))
        #expect(aheadAt >= ahead)
        #expect(nextAt >= aheadAt)
    }
}
