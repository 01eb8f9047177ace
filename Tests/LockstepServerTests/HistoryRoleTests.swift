import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Who may do what: with `--history-role admin`, players take back only their own moves and a referee takes back
/// anyone's; presence says who each client is.
@Suite(.timeLimit(.minutes(2))) struct HistoryRoleTests {
    @Test func anAppDeclaresItsHistoryRoleAndTheServerCannotLoosenIt() async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        let player = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300), subject: "p")
        let referee = try await tokens.issue(room: "test", role: .admin, lifetime: .seconds(300), subject: "ref")
        let game = App("game", summary: "moves a referee may take back", reducer: Counter(), historyRole: .admin)
        // The server's own --history-role is the default, write: the app's admin applies all the same.
        try await withServer(app: game, configure: { $0.tokens = tokens }) { server in
            let plays = try await Writer.connect(server.port, session: "p", token: player)
            let judge = try await Writer.connect(server.port, token: referee)
            #expect(try await plays.action(#"{"type":"increment"}"#)["type"] == "ack")
            let refused = try await plays.ask(#"{"type":"undo"}"#)
            #expect(refused["code"] == "forbidden")
            #expect(refused["message"]?.stringValue?.contains("admin") == true)
            #expect(try await plays.undoMine()["type"] == "ack")
            #expect(try await judge.ask(#"{"type":"undo"}"#)["type"] == "ack")
        }
    }

    @Test func belowTheHistoryRoleGlobalUndoAndRevertAreForbiddenAndUndoMineIsNot() async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        let alice = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300), subject: "alice")
        let bob = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300), subject: "bob")
        let referee = try await tokens.issue(room: "test", role: .admin, lifetime: .seconds(300), subject: "ref")
        try await withServer(app: .counter, configure: {
            $0.tokens = tokens
            $0.historyRole = .admin
        }) { server in
            let alicePlays = try await Writer.connect(server.port, session: "a", token: alice)
            let bobPlays = try await Writer.connect(server.port, session: "b", token: bob)
            let judge = try await Writer.connect(server.port, token: referee)
            #expect(try await alicePlays.action(#"{"type":"add","amount":5}"#)["type"] == "ack")
            #expect(try await bobPlays.action(#"{"type":"add","amount":2}"#)["type"] == "ack")

            for request in [#"{"type":"undo"}"#, #"{"type":"redo"}"#, #"{"type":"revert","to":0}"#] {
                let refused = try await bobPlays.ask(request)
                #expect(refused["code"] == "forbidden", "\(request): \(refused)")
                #expect(refused["message"]?.stringValue?.contains("admin") == true)
            }
            #expect(try await roomState(server.port, token: bob) == ["count": 7])
            // Bob takes back his own move only.
            #expect(try await bobPlays.undoMine()["type"] == "ack")
            #expect(try await roomState(server.port, token: bob) == ["count": 5])
            // The referee takes back anyone's change (the latest: bob's undo mine), and may revert.
            #expect(try await judge.ask(#"{"type":"undo"}"#)["type"] == "ack")
            #expect(try await roomState(server.port, token: referee) == ["count": 7])
            #expect(try await judge.ask(#"{"type":"revert","to":1}"#)["type"] == "ack")
            #expect(try await roomState(server.port, token: referee) == ["count": 5])
            // An admin also writes.
            #expect(try await judge.action(#"{"type":"increment"}"#)["type"] == "ack")
        }
    }

    @Test func byDefaultAnyWriterUndoesGloballyAndPresenceCarriesTheSubject() async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        let alice = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300), subject: "alice")
        let anonymous = try await tokens.issue(room: "test", role: .read, lifetime: .seconds(300))
        try await withServer(app: .counter, configure: { $0.tokens = tokens }) { server in
            let writer = try await Writer.connect(server.port, name: "Alice", token: alice)
            try await writer.action(#"{"type":"increment"}"#)
            #expect(try await writer.ask(#"{"type":"undo"}"#)["type"] == "ack")

            let reader = try await TestClient.connect(
                port: server.port, query: "token=\(anonymous)&name=watcher", using: sharedTransport)
            var peers: [JSON] = []
            while peers.count < 2 {
                peers = try await reader.nextJSON(type: "presence")["peers"]?.arrayValue ?? []
            }
            let byName = Dictionary(uniqueKeysWithValues: peers.map { ($0["name"]?.stringValue ?? "", $0) })
            #expect(byName["Alice"]?["sub"] == "alice")
            #expect(byName["watcher"]?["sub"] == nil, "a token without sub adds none")
        }
    }
}
