@testable import LockstepClient
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import Testing

/// Clients that follow part of a room (`path:`), and whole-room clients of a room with private parts: their
/// versions skip the changes they do not see, and that is not a gap.
@Suite(.timeLimit(.minutes(1)))
struct ViewClientTests {
    static func patch(_ ops: JSON) -> JSON { ["type": "patch", "ops": ops] }
    static func add(_ path: String, _ value: JSON) -> JSON {
        patch([["op": "add", "path": .string(path), "value": value]])
    }

    @Test func aViewMirrorsTheValueAtItsPathAndSkipsOtherVersions() async throws {
        try await withServer(app: .json) { server in
            let writer = try RoomClient(url: roomURL(server, "boards"), name: "writer")
            try await writer.connect()
            try await writer.send(action: Self.add("/boards", ["7": ["cards": []], "8": ["cards": []]]))
            let view = try RoomClient(url: roomURL(server, "boards"), path: "/boards/7", reconnect: quickRetry)
            #expect(view.path == (try JSONPointer("/boards/7")))
            try await view.connect()
            #expect(await view.state == ["cards": []])
            #expect(await view.version == 1)

            try await writer.send(action: Self.add("/boards/8/cards/-", "elsewhere"))
            try await writer.send(action: Self.add("/boards/7/cards/-", "mine"))
            let seen = try await updates(of: view) { $0.version == 3 }
            let patches = seen.filter { if case .patch = $0.change { true } else { false } }
            // Version 2 touched board 8 only: the view never hears of it, and does not resynchronise.
            #expect(patches.map(\.version) == [3])
            #expect(!seen.contains { if case .status(.resynchronising) = $0.change { true } else { false } })
            if case .patch(let ops, _, let paths) = patches.first?.change {
                #expect(ops.operations == [.add(path: try JSONPointer("/cards/0"), value: "mine")])
                #expect(paths == [try JSONPointer("/cards/0")])
            }
            #expect(await view.state == ["cards": ["mine"]])

            // Requests from a view name whole-room paths; a change of an ancestor arrives as one replace.
            try await view.send(action: Self.add("/boards/7/cards/-", "from the view"))
            #expect(await view.state == ["cards": ["mine", "from the view"]])
            try await writer.send(action: Self.patch([["op": "remove", "path": "/boards"]]))
            _ = try await updates(of: view) { $0.version == 5 }
            #expect(await view.state == .null)
            await view.close()
            await writer.close()
        }
    }

    @Test func aViewResumesWithTheChangesItMissed() async throws {
        try await withServer(app: .json) { server in
            let writer = try RoomClient(url: roomURL(server, "resume"))
            try await writer.connect()
            try await writer.send(action: Self.add("/a", ["n": 0]))
            let view = try RoomClient(url: roomURL(server, "resume") + "?path=%2Fa", reconnect: quickRetry)
            #expect(view.path == (try JSONPointer("/a")))
            // The server keeps a view's patches while it has a client: this one stays while the other drops.
            let keeper = try RoomClient(url: roomURL(server, "resume"), path: "/a")
            try await keeper.connect()
            try await view.connect()
            _ = try await updates(of: view) { $0.change == .snapshot }

            await view.dropConnectionForTesting()
            try await writer.send(action: Self.add("/b", 1))
            try await writer.send(action: Self.add("/a/n", 2))
            let seen = try await updates(of: view) { $0.version == 3 }
            #expect(seen.contains { $0.change == .resumed })
            #expect(!seen.contains { $0.change == .snapshot })
            #expect(seen.last?.state == ["n": 2])
            await keeper.close()
            await view.close()
            await writer.close()
        }
    }

    @Test func aViewStillResynchronisesOnAPatchThatDoesNotMoveForward() async throws {
        try await withServer(app: .json) { server in
            let writer = try RoomClient(url: roomURL(server, "back"))
            try await writer.connect()
            try await writer.send(action: Self.add("/a", 1))
            let view = try RoomClient(url: roomURL(server, "back"), path: "/a", reconnect: quickRetry)
            try await view.connect()
            _ = try await updates(of: view) { $0.change == .snapshot }
            let stale = ServerMessage.patch(
                version: 1, ops: JSONPatch([.replace(path: .root, value: 99)]), cause: Cause(kind: .action), undo: 1,
                redo: 0)
            await view.receive(stale)
            let seen = try await updates(of: view) { $0.change == .snapshot }
            #expect(seen.contains { if case .status(.resynchronising) = $0.change { true } else { false } })
            #expect(await view.state == 1)
            await view.close()
            await writer.close()
        }
    }

    @Test func aMalformedPathIsRefusedBeforeConnecting() async throws {
        #expect(throws: RoomClientError.invalidPath("boards")) {
            try RoomClient(url: "ws://127.0.0.1:1/rooms/x", path: "boards")
        }
        #expect(throws: RoomClientError.invalidPath("/a~2")) {
            try RoomClient(url: "ws://127.0.0.1:1/rooms/x?path=%2Fa~2")
        }
    }

    @Test func aTypedViewShowsConfirmedStateOnly() async throws {
        try await withServer(app: .todos) { server in
            let store = try SharedStore(Todos(), url: roomURL(server, "typed-view"))
            try await store.connect()
            try await store.send(.add(title: "milk"))
            let item = try SharedView(
                Todos.self, at: "/items/0", as: Todos.Item.self, url: roomURL(server, "typed-view"))
            try await item.connect()
            #expect(item.state == Todos.Item(id: 1, title: "milk"))
            let version = try await item.send(.toggle(id: 1))
            #expect(version == 2)
            #expect(item.state?.done == true)
            try await store.send(.add(title: "bread"))
            try await item.send(.remove(id: 1))
            // Removing item 1 shifts item 2 into /items/0: the view now shows bread.
            #expect(item.state == Todos.Item(id: 2, title: "bread"))
            try await store.send(.remove(id: 2))
            try await waitUntil("the view to empty") { item.state == nil }
            await item.close()
            await store.close()
        }
    }

    @Test func privatePartsAndViewsCompose() async throws {
        let tokens = try await TokenAuthority(secret: Array("0123456789abcdef0123456789abcdef-views".utf8))
        let alice = try await tokens.issue(room: "game", role: .write, lifetime: .seconds(300), subject: "alice")
        let bob = try await tokens.issue(room: "game", role: .write, lifetime: .seconds(300), subject: "bob")
        try await withServer(app: .json, configure: {
            $0.tokens = tokens
            $0.privateParts = try! PrivateParts(["/hands/{sub}"])
        }) { server in
            let url = roomURL(server, "game")
            let aliceRoom = try RoomClient(url: url + "?token=\(alice)", name: "alice", reconnect: quickRetry)
            let bobRoom = try RoomClient(url: url + "?token=\(bob)", name: "bob", reconnect: quickRetry)
            let bobHands = try RoomClient(url: url + "?token=\(bob)", path: "/hands", reconnect: quickRetry)
            try await aliceRoom.connect()
            try await aliceRoom.send(action: Self.add("/hands", [:]))
            // Bob's phone keeps his view of the room open on the server while his other connection drops.
            let bobPhone = try RoomClient(url: url + "?token=\(bob)", name: "bob's phone")
            try await bobRoom.connect()
            try await bobPhone.connect()
            try await bobHands.connect()
            try await bobRoom.send(action: Self.add("/hands/bob", ["card": "bob-card"]))
            try await aliceRoom.send(action: Self.add("/hands/alice", ["card": "SECRET"]))
            try await aliceRoom.send(action: Self.add("/table", ["public"]))

            // Bob's whole-room client skips version 3 (alice's hand) without resynchronising.
            let bobSeen = try await updates(of: bobRoom) { $0.version == 4 }
            #expect(!bobSeen.contains { if case .status(.resynchronising) = $0.change { true } else { false } })
            #expect(bobSeen.last?.state == ["hands": ["bob": ["card": "bob-card"]], "table": ["public"]])
            #expect(!bobSeen.contains { String(decoding: $0.state.serialized(), as: UTF8.self).contains("SECRET") })
            #expect(await bobHands.state == ["bob": ["card": "bob-card"]])
            #expect(await aliceRoom.state["hands"]?["alice"] == ["card": "SECRET"])

            // After a drop, bob resumes; alice's later change of her hand still reaches him as nothing.
            await bobRoom.dropConnectionForTesting()
            try await aliceRoom.send(action: Self.add("/hands/alice/card", "SECRET2"))
            try await aliceRoom.send(action: Self.add("/table/-", "x"))
            let resumed = try await updates(of: bobRoom) { $0.version == 6 }
            #expect(resumed.contains { $0.change == .resumed })
            #expect(await bobRoom.state == ["hands": ["bob": ["card": "bob-card"]], "table": ["public", "x"]])
            await bobPhone.close()
            await bobHands.close()
            await bobRoom.close()
            await aliceRoom.close()
        }
    }
}
