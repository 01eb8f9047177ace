import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTransport
import Testing

/// The protocol end to end: a real server, real WebSocket clients on loopback.
@Suite(.timeLimit(.minutes(2))) struct ProtocolTests {
    let transport = sharedTransport

    @Test func theFirstMessageIsASnapshotThenPresence() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, room: "first", query: "name=alice", using: transport)
            let snapshot = try await client.next()
            #expect(snapshot == .snapshot(room: "first", you: "c1", version: 0, state: ["count": 0], undo: 0, redo: 0))
            #expect(try await client.next() == .presence([Peer(client: "c1", name: "alice")]))
        }
    }

    @Test func anActionReachesEveryClientBeforeTheAck() async throws {
        try await withServer { server in
            let alice = try await TestClient.connect(server, using: transport)
            let bob = try await TestClient.connect(server, using: transport)
            alice.send(.action(id: "a1", action: ["type": "increment"]))

            let patch = try await alice.next { if case .patch = $0 { true } else { false } }
            let expected = ServerMessage.patch(
                version: 1, ops: JSONPatch([.replace(path: JSONPointer(tokens: ["count"]), value: 1)]),
                cause: Cause(kind: .action, client: "c1", id: "a1", action: ["type": "increment"]), undo: 1, redo: 0
            )
            #expect(patch.untimed == expected)
            #expect(
                try await alice.next { if case .presence = $0 { false } else { true } } == .ack(id: "a1", version: 1))
            #expect(try await bob.next { if case .patch = $0 { true } else { false } }.untimed == expected)
        }
    }

    @Test func aNoOpIsAcknowledgedAtTheCurrentVersionWithNoPatch() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            client.send(.action(id: "r", action: ["type": "reset"]))
            client.send(.action(id: "i", action: ["type": "increment"]))
            let first = try await client.next { if case .presence = $0 { false } else { !($0.isSnapshot) } }
            #expect(first == .ack(id: "r", version: 0))
            let second = try await client.next { if case .presence = $0 { false } else { true } }
            #expect(second.isPatch(version: 1))
        }
    }

    @Test func undoAndRedoRollEveryPeerBackAndForth() async throws {
        try await withServer(app: .todos) { server in
            let alice = try await TestClient.connect(server, using: transport)
            let bob = try await TestClient.connect(server, using: transport)
            var recorded: [JSON] = [try await alice.nextSnapshotState()]
            for title in ["milk", "eggs", "bread"] {
                alice.send(.action(id: title, action: ["type": "add", "title": .string(title)]))
                try await alice.catchUp(to: recorded.count)
                recorded.append(await alice.state)
            }
            bob.send(.undo(id: "u1"))
            bob.send(.undo(id: "u2"))
            try await alice.catchUp(to: 5)
            try await bob.catchUp(to: 5)
            #expect(await alice.state == recorded[1])
            #expect(await bob.state == recorded[1])

            alice.send(.redo(id: "r1"))
            try await bob.catchUp(to: 6)
            #expect(await bob.state == recorded[2])
            #expect(await bob.gaps.isEmpty)
        }
    }

    @Test func undoCausesNameTheOriginalVersion() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            client.send(.action(id: "a", action: ["type": "add", "amount": 5]))
            client.send(.undo(id: "u"))
            let undo = try await client.next { $0.isPatch(version: 2) }
            guard case .patch(_, let ops, let cause, let undoCount, let redoCount) = undo else { return }
            #expect(cause.untimed == Cause(kind: .undo, client: "c1", id: "u", of: 1))
            #expect(ops == JSONPatch([.replace(path: JSONPointer(tokens: ["count"]), value: 0)]))
            #expect(undoCount == 0)
            #expect(redoCount == 1)
            #expect(try await client.next { $0.isAck && $0 != .ack(id: "a", version: 1) } == .ack(id: "u", version: 2))
        }
    }

    @Test func historyListsRecentCausesNewestLast() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            for index in 1...5 { client.send(.action(id: "a\(index)", action: ["type": "increment"])) }
            client.send(.history(id: "h", limit: 2))
            let history = try await client.next { if case .history = $0 { true } else { false } }
            #expect(
                history.untimed
                    == .history(
                        id: "h",
                        entries: [
                            .init(
                                version: 4,
                                cause: Cause(kind: .action, client: "c1", id: "a4", action: ["type": "increment"])),
                            .init(
                                version: 5,
                                cause: Cause(kind: .action, client: "c1", id: "a5", action: ["type": "increment"])),
                        ]))
        }
    }

    @Test func presenceFollowsJoinsAndLeaves() async throws {
        try await withServer { server in
            let alice = try await TestClient.connect(server, query: "name=alice", using: transport)
            _ = try await alice.next { $0 == .presence([Peer(client: "c1", name: "alice")]) }
            let bob = try await TestClient.connect(server, query: "name=bob", using: transport)
            _ = try await alice.next {
                $0 == .presence([Peer(client: "c1", name: "alice"), Peer(client: "c2", name: "bob")])
            }
            bob.close()
            _ = try await alice.next { $0 == .presence([Peer(client: "c1", name: "alice")]) }
        }
    }

    @Test func longNamesAreCutTo64Characters() async throws {
        try await withServer { server in
            let name = String(repeating: "n", count: 100)
            let client = try await TestClient.connect(server, query: "name=\(name)", using: transport)
            let presence = try await client.next { if case .presence = $0 { true } else { false } }
            #expect(presence == .presence([Peer(client: "c1", name: String(repeating: "n", count: 64))]))
        }
    }
}

extension ServerMessage {
    var isSnapshot: Bool { if case .snapshot = self { true } else { false } }
    var isAck: Bool { if case .ack = self { true } else { false } }
    func isPatch(version wanted: Int) -> Bool {
        if case .patch(let version, _, _, _, _) = self { version == wanted } else { false }
    }
}

extension TestClient {
    /// Reads the snapshot and returns its state.
    func nextSnapshotState() async throws -> JSON {
        let message = try await next { $0.isSnapshot }
        guard case .snapshot(_, _, _, let state, _, _) = message else { return .null }
        return state
    }
}
