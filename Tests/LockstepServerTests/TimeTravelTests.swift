import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepTestSupport
import Testing

/// Revert over real sockets: PROTOCOL 1.1 "Time travel".
@Suite(.timeLimit(.minutes(2))) struct TimeTravelTests {
    let transport = sharedTransport

    /// Sends `actions` one by one and returns the state after each version, version 0 first.
    private func record(_ actions: [JSON], by client: TestClient) async throws -> [JSON] {
        var states = [try await client.nextSnapshotState()]
        for (index, action) in actions.enumerated() {
            client.send(.action(id: "a\(index)", action: action))
            _ = try await client.next { $0 == .ack(id: "a\(index)", version: index + 1) }
            states.append(await client.state)
        }
        return states
    }

    private func expectError(
        _ client: TestClient, id: String, code: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let reply = try await client.next(sourceLocation: sourceLocation) { message in
            switch message {
            case .error(let replyID, _, _), .ack(let replyID, _): replyID == id
            default: false
            }
        }
        guard case .error(_, let got, let message) = reply else {
            Issue.record("expected \(code), got \(reply)", sourceLocation: sourceLocation)
            return
        }
        #expect(got == code, sourceLocation: sourceLocation)
        #expect(!message.isEmpty, sourceLocation: sourceLocation)
    }

    @Test func aRevertIsOnePatchToEveryoneThenTheAck() async throws {
        try await withServer { server in
            let alice = try await TestClient.connect(server, using: transport)
            let bob = try await TestClient.connect(server, using: transport)
            let states = try await record(
                [["type": "add", "amount": 5], ["type": "add", "amount": 3], ["type": "increment"]], by: alice)
            bob.send(.revert(id: "t1", to: 1))
            let expected = ServerMessage.patch(
                version: 4, ops: JSONPatch([.replace(path: JSONPointer(tokens: ["count"]), value: 5)]),
                cause: Cause(kind: .revert, client: "c2", id: "t1", to: 1), undo: 4, redo: 0
            )
            #expect(try await bob.next { $0.isPatch(version: 4) }.untimed == expected)
            #expect(try await bob.next { !$0.isPresence } == .ack(id: "t1", version: 4))
            #expect(try await alice.next { $0.isPatch(version: 4) }.untimed == expected)
            #expect(await alice.state == states[1])
            let raw = try #require(await bob.frames.last { String(decoding: $0, as: UTF8.self).contains("revert") })
            #expect(
                String(decoding: raw, as: UTF8.self).contains(#""cause":{"kind":"revert","client":"c2","id":"t1","to":1,"at":"#))
        }
    }

    @Test func aRevertIsUndoneAndRedoneWithExactStates() async throws {
        try await withServer(app: .todos) { server in
            let client = try await TestClient.connect(server, using: transport)
            let states = try await record(
                [
                    ["type": "add", "title": "milk"], ["type": "add", "title": "eggs"], ["type": "toggle", "id": 1],
                    ["type": "rename", "id": 2, "title": "bread"], ["type": "remove", "id": 1],
                ], by: client)
            client.send(.revert(id: "t", to: 2))
            _ = try await client.next { $0 == .ack(id: "t", version: 6) }
            #expect(await client.state == states[2])

            client.send(.undo(id: "u"))
            let undo = try await client.next { $0.isPatch(version: 7) }
            guard case .patch(_, _, let undoCause, let undoCount, let redoCount) = undo else { return }
            #expect(undoCause.untimed == Cause(kind: .undo, client: "c1", id: "u", of: 6))
            #expect((undoCount, redoCount) == (5, 1))
            _ = try await client.next { $0 == .ack(id: "u", version: 7) }
            #expect(await client.state == states[5])

            client.send(.redo(id: "r"))
            let redo = try await client.next { $0.isPatch(version: 8) }
            guard case .patch(_, _, let redoCause, _, _) = redo else { return }
            #expect(redoCause.untimed == Cause(kind: .redo, client: "c1", id: "r", of: 6))
            _ = try await client.next { $0 == .ack(id: "r", version: 8) }
            #expect(await client.state == states[2])
            #expect(await client.gaps.isEmpty)
        }
    }

    @Test func aRevertWorksOnTheJSONApp() async throws {
        try await withServer(app: .json) { server in
            let client = try await TestClient.connect(server, using: transport)
            func patch(_ ops: JSON) -> JSON { ["type": "patch", "ops": ops] }
            let states = try await record(
                [
                    patch([["op": "add", "path": "/list", "value": [1, 2, 3]]]),
                    patch([["op": "add", "path": "/name", "value": "x"], ["op": "remove", "path": "/list/0"]]),
                    patch([["op": "replace", "path": "", "value": ["other": true]]]),
                ], by: client)
            for target in [1, 0, 3, 2] {
                client.send(.revert(id: "t\(target)", to: target))
                _ = try await client.next { if case .ack("t\(target)", _) = $0 { true } else { false } }
                #expect(await client.state == states[target])
            }
        }
    }

    @Test func aRevertEmptiesTheRedoSide() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            _ = try await record([["type": "increment"], ["type": "increment"]], by: client)
            client.send(.undo(id: "u"))
            client.send(.revert(id: "t", to: 0))
            let patch = try await client.next { $0.isPatch(version: 4) }
            guard case .patch(_, _, _, let undo, let redo) = patch else { return }
            #expect((undo, redo) == (2, 0))
            client.send(.redo(id: "r"))
            try await expectError(client, id: "r", code: "nothing_to_redo")
        }
    }

    @Test func aRevertToTheCurrentStateChangesNothing() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            _ = try await record([["type": "increment"], ["type": "decrement"], ["type": "increment"]], by: client)
            client.send(.undo(id: "u"))
            _ = try await client.next { $0 == .ack(id: "u", version: 4) }
            // Version 4's state ({"count":0}) is also version 2's and version 0's.
            client.send(.revert(id: "same", to: 4))
            client.send(.revert(id: "equal", to: 2))
            client.send(.revert(id: "zero", to: 0))
            #expect(try await client.next { !$0.isPresence } == .ack(id: "same", version: 4))
            #expect(try await client.next { !$0.isPresence } == .ack(id: "equal", version: 4))
            #expect(try await client.next { !$0.isPresence } == .ack(id: "zero", version: 4))
            // The redo side is untouched.
            client.send(.redo(id: "r"))
            #expect(try await client.next { !$0.isPresence }.isPatch(version: 5))
        }
    }

    @Test func aBadTargetIsABadMessageAndChangesNothing() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            _ = try await record([["type": "increment"]], by: client)
            for (id, text) in [
                ("missing", #"{"type":"revert","id":"missing"}"#),
                ("string", #"{"type":"revert","id":"string","to":"1"}"#),
                ("negative", #"{"type":"revert","id":"negative","to":-1}"#),
                ("fraction", #"{"type":"revert","id":"fraction","to":0.5}"#),
                ("null", #"{"type":"revert","id":"null","to":null}"#),
                ("ahead", #"{"type":"revert","id":"ahead","to":2}"#),
            ] {
                client.sendRaw(text)
                try await expectError(client, id: id, code: "bad_message")
            }
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["version"] == 1)
        }
    }

    @Test func aVersionPastTheResumeWindowIsUnknownInMemory() async throws {
        try await withServer(configure: { $0.resumeWindow = 3 }) { server in
            let client = try await TestClient.connect(server, using: transport)
            let states = try await record(Array(repeating: ["type": "increment"], count: 10), by: client)
            client.send(.revert(id: "old", to: 6))
            try await expectError(client, id: "old", code: "unknown_version")
            client.send(.revert(id: "edge", to: 7))
            _ = try await client.next { $0 == .ack(id: "edge", version: 11) }
            #expect(await client.state == states[7])
        }
    }

    @Test func aReadTokenMayNotRevert() async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        try await withServer(configure: { $0.tokens = tokens }) { server in
            let token = try await tokens.issue(room: "test", role: .read, lifetime: .seconds(60))
            let reader = try await TestClient.connect(server, query: "token=\(token)", using: transport)
            _ = try await reader.nextSnapshotState()
            reader.send(.revert(id: "t", to: 0))
            try await expectError(reader, id: "t", code: "forbidden")
        }
    }
}

extension ServerMessage {
    var isPresence: Bool { if case .presence = self { true } else { false } }
}
