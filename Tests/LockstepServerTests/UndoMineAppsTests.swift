import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Every compensation of the todos app and the json app's guarded inverse, with clients interleaving.
@Suite(.timeLimit(.minutes(2))) struct UndoMineAppsTests {
    static func items(_ port: Int) async throws -> [JSON] {
        try await roomState(port)?["items"]?.arrayValue ?? []
    }

    static func titles(_ port: Int) async throws -> [String] {
        try await items(port).compactMap { $0["title"]?.stringValue }
    }

    @Test func anAddIsTakenBackByRemovingThatItemWhereverItIsNow() async throws {
        try await withServer(app: .todos) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            let carol = try await Writer.connect(server.port)
            try await alice.action(#"{"type":"add","title":"milk"}"#)
            try await bob.action(#"{"type":"add","title":"bread"}"#)
            try await carol.action(#"{"type":"remove","id":2}"#)
            try await carol.action(#"{"type":"add","title":"eggs"}"#)
            try await alice.undoMine()
            #expect(try await Self.titles(server.port) == ["eggs"])
            // Re-applied: the item comes back, same id, at its index.
            try await alice.redoMine()
            #expect(try await Self.items(server.port).first == ["id": 1, "title": "milk", "done": false])
            try await carol.undoMine()
            #expect(try await Self.titles(server.port) == ["milk"])
        }
    }

    @Test func aToggleIsTakenBackBySettingDoneBackUnlessSomeoneToggledSince() async throws {
        try await withServer(app: .todos) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await bob.action(#"{"type":"add","title":"milk"}"#)
            try await bob.action(#"{"type":"add","title":"bread"}"#)
            try await alice.action(#"{"type":"toggle","id":1}"#)
            try await bob.action(#"{"type":"toggle","id":2}"#)
            try await alice.undoMine()
            #expect(try await Self.items(server.port).map { $0["done"] } == [false, true])

            try await alice.action(#"{"type":"toggle","id":2}"#)
            try await bob.action(#"{"type":"toggle","id":2}"#)
            #expect(try await alice.undoMine()["code"] == "conflict")
            #expect(try await Self.items(server.port).map { $0["done"] } == [false, true])
        }
    }

    @Test func aRenameIsTakenBackToTheOldTitleUnlessRenamedSince() async throws {
        try await withServer(app: .todos) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await bob.action(#"{"type":"add","title":"milk"}"#)
            try await alice.action(#"{"type":"rename","id":1,"title":"oat milk"}"#)
            try await bob.action(#"{"type":"add","title":"bread"}"#)
            try await alice.undoMine()
            #expect(try await Self.titles(server.port) == ["milk", "bread"])

            try await alice.action(#"{"type":"rename","id":2,"title":"rye bread"}"#)
            try await bob.action(#"{"type":"rename","id":2,"title":"sourdough"}"#)
            #expect(try await alice.undoMine()["code"] == "conflict")
            #expect(try await Self.titles(server.port) == ["milk", "sourdough"])
        }
    }

    @Test func aRemoveIsTakenBackByPuttingTheItemBackAtItsIndex() async throws {
        try await withServer(app: .todos) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            for title in ["a", "b", "c"] { try await bob.action(#"{"type":"add","title":"\#(title)"}"#) }
            try await bob.action(#"{"type":"toggle","id":2}"#)
            try await alice.action(#"{"type":"remove","id":2}"#)
            try await bob.action(#"{"type":"add","title":"d"}"#)
            try await alice.undoMine()
            #expect(try await Self.items(server.port)[1] == ["id": 2, "title": "b", "done": true])
            #expect(try await Self.titles(server.port) == ["a", "b", "c", "d"])

            // Past the end of a list that got shorter: at the end.
            try await alice.action(#"{"type":"remove","id":4}"#)
            try await bob.action(#"{"type":"remove","id":1}"#)
            try await bob.action(#"{"type":"remove","id":2}"#)
            try await alice.undoMine()
            #expect(try await Self.titles(server.port) == ["c", "d"])
        }
    }

    @Test func clearCompletedIsTakenBackByPuttingBackWhatItRemoved() async throws {
        try await withServer(app: .todos) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            for title in ["a", "b", "c", "d"] { try await bob.action(#"{"type":"add","title":"\#(title)"}"#) }
            try await bob.action(#"{"type":"toggle","id":1}"#)
            try await bob.action(#"{"type":"toggle","id":3}"#)
            try await alice.action(#"{"type":"clearCompleted"}"#)
            try await bob.action(#"{"type":"rename","id":2,"title":"B"}"#)
            try await alice.undoMine()
            #expect(try await Self.titles(server.port) == ["a", "B", "c", "d"])
            #expect(try await Self.items(server.port).map { $0["done"] } == [true, false, true, false])
            // Its redo mine clears them again; taking that back conflicts once one of them is gone.
            try await alice.redoMine()
            #expect(try await Self.titles(server.port) == ["B", "d"])
        }
    }

    @Test func anItemRemovedSinceIsAConflict() async throws {
        try await withServer(app: .todos) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await alice.action(#"{"type":"add","title":"milk"}"#)
            try await alice.action(#"{"type":"toggle","id":1}"#)
            try await bob.action(#"{"type":"remove","id":1}"#)
            let refused = try await alice.undoMine()
            #expect(refused["code"] == "conflict")
            #expect(refused["message"]?.stringValue?.contains("removed") == true)
            #expect(try await Self.items(server.port).isEmpty)
        }
    }

    @Test func aJSONPatchIsTakenBackByItsInverseWhileWhatItWroteIsThere() async throws {
        try await withServer(app: .json) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await alice.action(#"{"type":"patch","ops":[{"op":"add","path":"/a","value":1}]}"#)
            try await bob.action(#"{"type":"patch","ops":[{"op":"add","path":"/b","value":2}]}"#)
            try await alice.action(#"{"type":"patch","ops":[{"op":"add","path":"/x","value":{"n":1}}]}"#)
            try await bob.action(#"{"type":"patch","ops":[{"op":"replace","path":"/x/n","value":2}]}"#)
            // `/x` no longer holds what alice wrote there.
            #expect(try await alice.undoMine()["code"] == "conflict")
            #expect(try await roomState(server.port) == ["a": 1, "b": 2, "x": ["n": 2]])
            try await bob.undoMine()
            try await alice.undoMine()
            try await alice.undoMine()
            #expect(try await roomState(server.port) == ["b": 2])
            try await alice.redoMine()
            #expect(try await roomState(server.port) == ["b": 2, "a": 1])
        }
    }

    @Test func aRemovedMemberAddedAgainSinceIsAConflict() async throws {
        try await withServer(app: .json) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await bob.action(#"{"type":"patch","ops":[{"op":"add","path":"/a","value":1}]}"#)
            try await alice.action(#"{"type":"patch","ops":[{"op":"remove","path":"/a"}]}"#)
            try await bob.action(#"{"type":"patch","ops":[{"op":"add","path":"/a","value":5}]}"#)
            #expect(try await alice.undoMine()["code"] == "conflict")
            #expect(try await roomState(server.port) == ["a": 5])
        }
    }
}
