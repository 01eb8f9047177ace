@testable import LockstepClient
import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// `undo(mine:)` and `redo(mine:)` against a real server: a client takes back its own changes while others' stay,
/// every cause says who and when, a prediction stays right, and a request the outbox sends again is applied once.
@Suite(.timeLimit(.minutes(1)))
struct UndoMineTests {
    @Test func undoMineTakesBackOnlyYourOwnChangeAndSaysWhoAndWhen() async throws {
        try await withServer(app: .counter) { server in
            let start = Int(Date().timeIntervalSince1970 * 1000)
            let alice = try RoomClient(url: roomURL(server, "mine"), name: "alice")
            let bob = try RoomClient(url: roomURL(server, "mine"), name: "bob")
            try await alice.connect()
            try await bob.connect()
            #expect(try await alice.send(action: ["type": "increment"]) == 1)
            #expect(try await bob.send(action: ["type": "add", "amount": 10]) == 2)

            // Alice takes back her +1 after bob's +10: his stays.
            #expect(try await alice.undo(mine: true) == 3)
            #expect(await alice.state == ["count": 10])
            let undone = try #require(try await Self.patch(of: bob, at: 3))
            #expect(undone.kind == .undo && undone.mine && undone.of == 1)
            #expect(undone.name == "alice")

            #expect(try await alice.redo(mine: true) == 4)
            #expect(await alice.state == ["count": 11])
            await #expect(throws: Self.nothingToRedo) { try await alice.redo(mine: true) }
            // Bob's own undo takes back his +10, not alice's re-applied +1 (the room's latest change).
            #expect(try await bob.undo(mine: true) == 5)
            #expect(await bob.state == ["count": 1])
            let end = Int(Date().timeIntervalSince1970 * 1000)

            let history = try await bob.history(limit: 10)
            #expect(history.map(\.version) == [1, 2, 3, 4, 5])
            #expect(history.map(\.cause.name) == ["alice", "bob", "alice", "alice", "bob"])
            #expect(history.map(\.cause.mine) == [false, false, true, true, true])
            let times = history.compactMap(\.cause.at)
            #expect(times.count == 5)
            #expect(times == times.sorted(), "times never go back within a room")
            #expect(times.allSatisfy { (start...end).contains($0) }, "\(times) not within \(start)...\(end)")
            await alice.close()
            await bob.close()
        }
    }

    @Test func undoMineThatCannotApplyIsAConflictAndChangesNothing() async throws {
        try await withServer(app: .todos) { server in
            let alice = try SharedStore(Todos(), url: roomURL(server, "conflict"), name: "alice")
            let bob = try SharedStore(Todos(), url: roomURL(server, "conflict"), name: "bob")
            try await alice.connect()
            try await bob.connect()
            await #expect(throws: RoomClientError.self) { try await alice.undo(mine: true) }
            try await alice.send(.add(title: "milk"))
            try await bob.send(.remove(id: 1))
            do {
                try await alice.undo(mine: true)
                Issue.record("undo mine of an add whose item is gone was accepted")
            } catch RoomClientError.server(let code, let message) {
                #expect(code == "conflict")
                #expect(!message.isEmpty)
            }
            #expect(try await fetchRoom(port: server.port, room: "conflict").version == 2)
            #expect(alice.pendingCount == 0)
            await alice.close()
            await bob.close()
        }
    }

    /// Alice's path holds every byte 200 ms each way (and the server's replies while she queues): her undo mine is not
    /// predicted, and when its patch arrives the action she sent after it is applied again over the new state.
    @Test func aPredictionIsRecomputedWhenAnUndoMinePatchArrives() async throws {
        try await withServer(app: .todos) { server in
            let relay = try DelayRelay(targetPort: server.port, delay: .milliseconds(200))
            defer { relay.stop() }
            let alice = try SharedStore(Todos(), url: "ws://127.0.0.1:\(relay.port)/rooms/rebase", name: "alice")
            let bob = try SharedStore(Todos(), url: roomURL(server, "rebase"), name: "bob")
            try await alice.connect()
            try await bob.connect()
            try await alice.send(.add(title: "a"))
            try await bob.send(.add(title: "b"))
            try await waitUntil("alice to see bob's add") { alice.version >= 2 }

            // Replies wait until both requests are queued, so neither is answered early on a loaded machine.
            relay.holdReplies()
            let undo = Task { try await alice.undo(mine: true) }
            try await waitUntil("the undo in the outbox") { alice.pendingCount >= 1 }
            let add = Task { try await alice.send(.add(title: "c")) }
            try await waitUntil("the add in the outbox") { alice.pendingCount >= 2 }
            // Not predicted: "a" still shows until the server takes it back.
            #expect(alice.state.items.map(\.title) == ["a", "b", "c"])
            relay.releaseReplies()

            let undone = try await OptimisticStoreTests.firstUpdate(of: alice) { update in
                if case .patch(_, let cause, _) = update.update.change { return cause.mine }
                return false
            }
            #expect(undone.confirmedState.items.map(\.title) == ["b"])
            #expect(undone.state.items.map(\.title) == ["b", "c"])
            #expect(undone.isPredicted)
            #expect(try await undo.value == 3)
            #expect(try await add.value == 4)
            #expect(alice.state == alice.confirmedState)
            #expect(alice.confirmedState.items.map(\.title) == ["b", "c"])

            // Her add after the undo emptied her redo side; her next undo mine takes back that add.
            await #expect(throws: Self.nothingToRedo) { try await alice.redo(mine: true) }
            #expect(try await alice.undo(mine: true) == 5)
            #expect(alice.state.items.map(\.title) == ["b"])
            await alice.close()
            await bob.close()
        }
    }

    /// The undo's answer is lost with the connection after the server applied it: the session's mark covers it, so
    /// the client answers it without sending it again, and the room takes back one change, not two.
    @Test func anUndoMineInFlightWhenTheConnectionDropsAppliesOnce() async throws {
        try await withServer(app: .counter) { server in
            let relay = try DelayRelay(targetPort: server.port, delay: .milliseconds(5))
            defer { relay.stop() }
            let client = try RoomClient(url: "ws://127.0.0.1:\(relay.port)/rooms/inflight", reconnect: quickRetry)
            try await client.connect()
            try await client.send(action: ["type": "increment"])
            try await client.send(action: ["type": "increment"])

            relay.holdReplies()
            let undo = Task { try await client.undo(mine: true) }
            try await waitUntil("the server to apply the undo") {
                try await fetchRoom(port: server.port, room: "inflight").version >= 3
            }
            relay.cutConnections()
            relay.releaseReplies()
            #expect(try await within(30, "the undo to return") { try await undo.value } == 3)
            let room = try await fetchRoom(port: server.port, room: "inflight")
            #expect(room.version == 3)
            #expect(room.state == ["count": 1])
            #expect(await client.state == ["count": 1])
            #expect(await client.pendingCount == 0)
            await client.close()
        }
    }

    /// Sent while the server is away, the undo waits in the outbox and goes out, numbered, on the next connection;
    /// it takes back a change the same session made on an earlier connection.
    @Test func anUndoMineQueuedWhileTheServerIsAwayTakesBackTheSessionsChange() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-undo-mine-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try makeServer(app: .counter, dataDirectory: directory)
        let port = first.port
        let url = "ws://127.0.0.1:\(port)/rooms/away"
        let alice = try RoomClient(url: url, name: "alice", reconnect: quickRetry)
        try await alice.connect()
        try await alice.send(action: ["type": "add", "amount": 5])
        let bob = try RoomClient(url: url, name: "bob")
        try await bob.connect()
        try await bob.send(action: ["type": "add", "amount": 100])
        await bob.close()
        first.shutdown()

        let undo = Task { try await alice.undo(mine: true) }
        try await waitUntil("the queued undo") { await alice.pendingCount >= 1 }
        let second = try makeServer(app: .counter, port: port, dataDirectory: directory)
        defer { second.shutdown() }
        #expect(try await within(30, "the undo to return") { try await undo.value } == 3)
        #expect(try await fetchRoom(port: port, room: "away").state == ["count": 100])
        let cause = try #require(try await alice.history(limit: 1).last?.cause)
        #expect(cause.kind == .undo && cause.mine && cause.of == 1 && cause.name == "alice")
        await alice.close()
    }

    static let nothingToRedo = RoomClientError.server(code: "nothing_to_redo", message: "there is nothing to redo")

    /// The cause of the patch that brought `client` to `version`, from its updates.
    static func patch(of client: RoomClient, at version: Int) async throws -> Cause? {
        let seen = try await updates(of: client) { $0.version >= version }
        for update in seen where update.version == version {
            if case .patch(_, let cause, _) = update.change { return cause }
        }
        return nil
    }
}
