@testable import LockstepClient
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import Testing
import LockstepTestSupport

@Suite(.timeLimit(.minutes(1)))
struct RoomClientTests {
    @Test func threeClientsDoingRandomActionsConverge() async throws {
        try await withServer(app: .todos) { server in
            let clients = try (0..<3).map { try RoomClient(url: roomURL(server, "converge"), name: "p\($0)") }
            for client in clients { try await client.connect() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        var random = SplitMix64(seed: UInt64(index + 1) * 7919)
                        for step in 0..<60 {
                            let id = Int.random(in: 1...12, using: &random)
                            do {
                                switch Int.random(in: 0..<10, using: &random) {
                                case 0..<4:
                                    try await client.send(action: [
                                        "type": "add", "title": .string("t\(index)-\(step)"),
                                    ])
                                case 4..<6: try await client.send(action: ["type": "toggle", "id": .int(id)])
                                case 6: try await client.send(action: ["type": "remove", "id": .int(id)])
                                case 7: try await client.send(action: ["type": "clearCompleted"])
                                case 8: try await client.undo()
                                default: try await client.redo()
                                }
                            } catch RoomClientError.server(let code, _) {
                                #expect(["rejected", "nothing_to_undo", "nothing_to_redo"].contains(code))
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let server = try await fetchRoom(port: server.port, room: "converge")
            #expect(server.version > 0)
            for client in clients {
                let seen = try await updates(of: client) { $0.version == server.version }
                #expect(isContiguous(seen))
                #expect(seen.first?.change == .snapshot)
                #expect(await client.state == server.state)
                #expect(await client.version == server.version)
                await client.close()
            }
        }
    }

    @Test func requestsReturnAckVersionsAndServerErrors() async throws {
        try await withServer(app: .counter) { server in
            let client = try RoomClient(url: roomURL(server, "acks"), name: "alice")
            try await client.connect()
            #expect(client.room == "acks")
            #expect(try await client.send(action: ["type": "increment"]) == 1)
            #expect(await client.state == ["count": 1])
            #expect(try await client.send(action: ["type": "add", "amount": 4]) == 2)
            #expect(try await client.undo() == 3)
            #expect(await client.state == ["count": 1])
            #expect(try await client.redo() == 4)
            #expect(await client.undoCount == 2)
            let history = try await client.history(limit: 10)
            #expect(history.map(\.version) == [1, 2, 3, 4])
            #expect(history.map(\.cause.kind) == [.action, .action, .undo, .redo])
            await #expect(throws: RoomClientError.server(code: "nothing_to_redo", message: "there is nothing to redo"))
            {
                try await client.redo()
            }
            do {
                try await client.send(action: ["type": "explode"])
                Issue.record("an unknown action was accepted")
            } catch let error as RoomClientError {
                guard case .server(let code, let message) = error else { throw error }
                #expect(code == "invalid_action")
                #expect(!message.isEmpty)
            }
            #expect(await client.peers.map(\.name) == ["alice"])
            await client.close()
            await #expect(throws: RoomClientError.closed) { try await client.undo() }
        }
    }

    @Test func firstConnectionFailureIsReported() async throws {
        // A port held without listening: a port freed by a closed server could be taken by another test's.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let client = try RoomClient(url: "ws://127.0.0.1:\(reserved.port)/rooms/x")
        await #expect(throws: RoomClientError.self) { try await client.connect() }
        #expect(await client.status == .closed)
        #expect(throws: RoomClientError.invalidURL("http://x/rooms/a")) { try RoomClient(url: "http://x/rooms/a") }
        #expect(throws: RoomClientError.self) { try RoomClient(url: "ws://127.0.0.1:1/other/a") }
    }

    @Test func reconnectsAcrossServerRestartToTheNewState() async throws {
        let first = try makeServer(app: .counter)
        let port = first.port
        let client = try RoomClient(url: "ws://127.0.0.1:\(port)/rooms/restart", name: "alice", reconnect: quickRetry)
        try await client.connect()
        for _ in 0..<3 { try await client.send(action: ["type": "increment"]) }
        #expect(await client.version == 3)
        _ = try await updates(of: client) { $0.version == 3 && $0.change != .snapshot }

        first.shutdown()
        let dropped = try await updates(of: client) {
            if case .status(.disconnected) = $0.change { return true }
            return false
        }
        #expect(dropped.allSatisfy { $0.version == 3 })

        // The new server has no memory of the room: it restarts at version 0, behind the client's since=3.
        let second = try makeServer(app: .counter, port: port)
        defer { second.shutdown() }
        let other = try RoomClient(url: "ws://127.0.0.1:\(port)/rooms/restart", name: "bob")
        try await other.connect()
        try await other.send(action: ["type": "add", "amount": 10])
        let after = try await updates(of: client) { $0.version == 1 && $0.state == ["count": 10] }
        // The first state shown after the restart is a snapshot of the new server, never a patch on the old state.
        let states = after.filter { if case .status = $0.change { return false } else { return true } }
        let shown = try #require(states.first)
        #expect(shown.change == .snapshot)
        #expect(isContiguous(states))
        for update in states { #expect(update.state == ["count": update.version == 0 ? 0 : 10]) }
        #expect(after.last?.status == .live)
        #expect(try await client.send(action: ["type": "increment"]) == 2)
        #expect(try await fetchRoom(port: port, room: "restart").state == ["count": 11])
        await other.close()
        await client.close()
    }

    @Test func resumesAfterADropWithoutASnapshot() async throws {
        try await withServer(app: .counter) { server in
            let client = try RoomClient(url: roomURL(server, "blip"), reconnect: quickRetry)
            try await client.connect()
            try await client.send(action: ["type": "increment"])
            _ = try await updates(of: client) { $0.version == 1 }
            // Drop the connection under the client, as a network blip would.
            await client.dropConnectionForTesting()
            let other = try RoomClient(url: roomURL(server, "blip"))
            try await other.connect()
            try await other.send(action: ["type": "add", "amount": 5])
            let seen = try await updates(of: client) { $0.version == 2 }
            #expect(!seen.contains { $0.change == .snapshot })
            #expect(seen.contains { $0.change == .resumed })
            #expect(seen.last?.state == ["count": 6])
            await other.close()
            await client.close()
        }
    }

    @Test func versionGapMakesTheClientResynchronise() async throws {
        try await withServer(app: .counter) { server in
            let client = try RoomClient(url: roomURL(server, "gap"), reconnect: quickRetry)
            try await client.connect()
            try await client.send(action: ["type": "add", "amount": 2])
            _ = try await updates(of: client) { $0.version == 1 }
            let wrong = ServerMessage.patch(
                version: 5, ops: JSONPatch([.replace(path: try JSONPointer("/count"), value: 99)]),
                cause: Cause(kind: .action), undo: 1, redo: 0
            )
            await client.receive(wrong)
            let seen = try await updates(of: client) { $0.change == .snapshot }
            #expect(seen.contains { if case .status(.resynchronising) = $0.change { true } else { false } })
            #expect(seen.allSatisfy { $0.state == ["count": 2] && $0.version == 1 })
            #expect(await client.state == ["count": 2])

            // A patch whose operations do not apply to the mirror is treated the same way.
            let broken = ServerMessage.patch(
                version: 2, ops: JSONPatch([.remove(path: try JSONPointer("/missing"))]),
                cause: Cause(kind: .action), undo: 1, redo: 0
            )
            await client.receive(broken)
            let again = try await updates(of: client) { $0.change == .snapshot }
            #expect(again.allSatisfy { $0.version == 1 && $0.state == ["count": 2] })
            #expect(try await client.send(action: ["type": "increment"]) == 2)
            await client.close()
        }
    }

    @Test func presenceListsPeersByName() async throws {
        try await withServer(app: .counter) { server in
            let alice = try RoomClient(url: roomURL(server, "people"), name: "alice smith")
            try await alice.connect()
            let bob = try RoomClient(url: roomURL(server, "people"), name: "bob")
            try await bob.connect()
            let seen = try await updates(of: alice) { $0.peers.count == 2 }
            #expect(seen.last?.peers.map(\.name) == ["alice smith", "bob"])
            if case .presence(let joined, _) = seen.last?.change {
                #expect(joined.map(\.name).contains("bob"))
            }
            await bob.close()
            let left = try await updates(of: alice) { $0.peers.count == 1 }
            if case .presence(_, let gone) = left.last?.change { #expect(gone.map(\.name) == ["bob"]) }
            await alice.close()
        }
    }
}
