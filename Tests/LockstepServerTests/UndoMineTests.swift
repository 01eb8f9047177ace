import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// One writer of a room over a real socket: sends requests and reads the answers to them.
struct Writer {
    let client: TestClient

    static func connect(
        _ port: Int, room: String = "test", session: String? = nil, name: String? = nil, token: String? = nil
    ) async throws -> Writer {
        let query = [session.map { "session=\($0)" }, name.map { "name=\($0)" }, token.map { "token=\($0)" }]
            .compactMap { $0 }.joined(separator: "&")
        let client = try await TestClient.connect(port: port, room: room, query: query, using: sharedTransport)
        _ = try await client.nextJSON(type: "snapshot")
        return Writer(client: client)
    }

    /// Sends one request and returns its answer (`ack` or `error`).
    @discardableResult
    func ask(_ text: String) async throws -> JSON {
        client.sendRaw(text)
        while true {
            let json = try await client.nextJSON()
            if ["ack", "error"].contains(json["type"]?.stringValue) { return json }
        }
    }

    /// Sends one request and returns the patch it made, read before its ack.
    func change(_ text: String) async throws -> JSON {
        client.sendRaw(text)
        var patch: JSON?
        while true {
            let json = try await client.nextJSON()
            if json["type"] == "patch" { patch = json }
            if json["type"] == "error" { Issue.record("\(text) was refused: \(json)"); return json }
            if json["type"] == "ack", let patch, patch["version"] == json["version"] { return patch }
        }
    }

    @discardableResult
    func action(_ action: String, seq: Int? = nil) async throws -> JSON {
        try await ask(#"{"type":"action","action":\#(action)\#(seq.map { ",\"seq\":\($0)" } ?? "")}"#)
    }

    @discardableResult
    func undoMine(seq: Int? = nil) async throws -> JSON {
        try await ask(#"{"type":"undo","mine":true\#(seq.map { ",\"seq\":\($0)" } ?? "")}"#)
    }

    @discardableResult
    func redoMine() async throws -> JSON { try await ask(#"{"type":"redo","mine":true}"#) }

    func close() { client.close() }
}

/// The room's state, read over HTTP (with `token` as a Bearer token).
func roomState(_ port: Int, room: String = "test", token: String? = nil) async throws -> JSON? {
    let headers = token.map { ["Authorization: Bearer \($0)"] } ?? []
    return try await HTTPGet(port: port, path: "/rooms/\(room)", headers: headers).json?["state"]
}

/// Undo mine and redo mine over real sockets: each client takes back its own changes while others keep theirs.
@Suite(.timeLimit(.minutes(2))) struct UndoMineTests {
    @Test func aCounterIncrementIsTakenBackByTheOppositeAmountAfterOthersAdded() async throws {
        try await withServer(app: .counter) { server in
            let alice = try await Writer.connect(server.port, name: "alice")
            let bob = try await Writer.connect(server.port, name: "bob")
            try await alice.action(#"{"type":"increment"}"#)
            try await bob.action(#"{"type":"add","amount":5}"#)

            let undo = try await alice.change(#"{"type":"undo","id":"u1","mine":true}"#)
            #expect(undo["cause"]?["kind"] == "undo")
            #expect(undo["cause"]?["mine"] == true)
            #expect(undo["cause"]?["of"] == 1)
            #expect(undo["cause"]?["id"] == "u1")
            #expect(undo["cause"]?["name"] == "alice")
            #expect(try await roomState(server.port) == ["count": 5])

            try await bob.undoMine()
            #expect(try await roomState(server.port) == ["count": 0])
            let redo = try await alice.change(#"{"type":"redo","mine":true}"#)
            #expect(redo["cause"]?["kind"] == "redo")
            #expect(redo["cause"]?["mine"] == true)
            #expect(redo["cause"]?["of"] == 1)
            #expect(try await roomState(server.port) == ["count": 1])
            // An undo mine is a change of the room: global undo takes it back.
            let undone = try await bob.change(#"{"type":"undo"}"#)
            #expect(undone["cause"]?["of"] == 5)
            #expect(undone["cause"]?["mine"] == nil)
            #expect(try await roomState(server.port) == ["count": 0])
        }
    }

    @Test func aResetIsTakenBackByItsInverseOnlyWhileTheCountIsUnchanged() async throws {
        try await withServer(app: .counter) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await bob.action(#"{"type":"add","amount":3}"#)
            try await alice.action(#"{"type":"reset"}"#)
            try await bob.action(#"{"type":"increment"}"#)
            let refused = try await alice.undoMine()
            #expect(refused["code"] == "conflict")
            #expect(try await roomState(server.port) == ["count": 1])

            try await bob.undoMine()
            try await alice.undoMine()
            #expect(try await roomState(server.port) == ["count": 3])
        }
    }

    @Test func nothingOfYoursToTakeBackOrReapplyIsAnError() async throws {
        try await withServer(app: .counter) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await bob.action(#"{"type":"increment"}"#)
            #expect(try await alice.undoMine()["code"] == "nothing_to_undo")
            #expect(try await alice.redoMine()["code"] == "nothing_to_redo")
            #expect(try await alice.ask(#"{"type":"undo","mine":"yes"}"#)["code"] == "bad_message")
            #expect(try await roomState(server.port) == ["count": 1])
        }
    }

    @Test func aChangeGlobalUndoTookBackIsPassedOver() async throws {
        try await withServer(app: .counter) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await alice.action(#"{"type":"add","amount":1}"#)
            try await alice.action(#"{"type":"add","amount":10}"#)
            try await bob.ask(#"{"type":"undo"}"#)
            let undo = try await alice.change(#"{"type":"undo","mine":true}"#)
            #expect(undo["cause"]?["of"] == 1)
            #expect(try await roomState(server.port) == ["count": 0])
            // Global redo puts the change back in effect: undo mine finds it again.
            try await bob.ask(#"{"type":"undo"}"#)
            try await bob.ask(#"{"type":"redo"}"#)
            #expect(try await roomState(server.port) == ["count": 0])
            #expect(try await alice.undoMine()["code"] == "nothing_to_undo")
        }
    }

    @Test func aGloballyUndoneUndoMinePutsTheChangeBackInEffect() async throws {
        try await withServer(app: .counter) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await alice.action(#"{"type":"add","amount":2}"#)
            try await alice.undoMine()
            try await bob.ask(#"{"type":"undo"}"#)
            #expect(try await roomState(server.port) == ["count": 2])
            let again = try await alice.change(#"{"type":"undo","mine":true}"#)
            #expect(again["cause"]?["of"] == 1)
            #expect(try await roomState(server.port) == ["count": 0])
        }
    }

    @Test func aNewActionEmptiesYourRedoSideOnly() async throws {
        try await withServer(app: .counter) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await alice.action(#"{"type":"increment"}"#)
            try await bob.action(#"{"type":"add","amount":10}"#)
            try await alice.undoMine()
            try await bob.undoMine()
            try await alice.action(#"{"type":"add","amount":100}"#)
            #expect(try await alice.redoMine()["code"] == "nothing_to_redo")
            try await bob.redoMine()
            #expect(try await roomState(server.port) == ["count": 110])
        }
    }

    @Test func successiveUndoMinesWalkBackAndRedoMinesComeForwardNewestFirst() async throws {
        try await withServer(app: .counter) { server in
            let alice = try await Writer.connect(server.port)
            let bob = try await Writer.connect(server.port)
            try await alice.action(#"{"type":"add","amount":1}"#)
            try await bob.action(#"{"type":"add","amount":1000}"#)
            try await alice.action(#"{"type":"add","amount":10}"#)
            #expect(try await alice.change(#"{"type":"undo","mine":true}"#)["cause"]?["of"] == 3)
            #expect(try await alice.change(#"{"type":"undo","mine":true}"#)["cause"]?["of"] == 1)
            #expect(try await roomState(server.port) == ["count": 1000])
            #expect(try await alice.undoMine()["code"] == "nothing_to_undo")
            #expect(try await alice.change(#"{"type":"redo","mine":true}"#)["cause"]?["of"] == 1)
            #expect(try await alice.change(#"{"type":"undo","mine":true}"#)["cause"]?["of"] == 1)
            #expect(try await alice.change(#"{"type":"redo","mine":true}"#)["cause"]?["of"] == 1)
            #expect(try await alice.change(#"{"type":"redo","mine":true}"#)["cause"]?["of"] == 3)
            #expect(try await roomState(server.port) == ["count": 1011])
        }
    }

    @Test func aSessionIsTheAuthorAcrossReconnectionsAConnectionOnlyWhileOpen() async throws {
        try await withServer(app: .counter) { server in
            let first = try await Writer.connect(server.port, session: "alice-1")
            try await first.action(#"{"type":"add","amount":7}"#, seq: 1)
            first.close()
            let again = try await Writer.connect(server.port, session: "alice-1")
            let undo = try await again.change(#"{"type":"undo","mine":true,"seq":2}"#)
            #expect(undo["cause"]?["of"] == 1)
            // The same request sent again after a drop is not applied twice.
            #expect(try await again.undoMine(seq: 2)["duplicate"] == true)
            #expect(try await roomState(server.port) == ["count": 0])

            let anonymous = try await Writer.connect(server.port)
            try await anonymous.action(#"{"type":"add","amount":3}"#)
            anonymous.close()
            let next = try await Writer.connect(server.port)
            #expect(try await next.undoMine()["code"] == "nothing_to_undo")
            #expect(try await roomState(server.port) == ["count": 3])
        }
    }

    @Test func aReadTokenMayNotUndoItsOwn() async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        let token = try await tokens.issue(room: "test", role: .read, lifetime: .seconds(60), subject: "reader")
        try await withServer(app: .counter, configure: { $0.tokens = tokens }) { server in
            let reader = try await Writer.connect(server.port, token: token)
            #expect(try await reader.undoMine()["code"] == "forbidden")
        }
    }
}
