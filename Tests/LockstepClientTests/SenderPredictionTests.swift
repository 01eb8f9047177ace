import Foundation
import LockstepClient
import LockstepCore
import LockstepServer
import LockstepTestSupport
import Testing

/// A store predicts as the server will apply: with the client's own sender, so a rule about who may play holds
/// locally too.
@Suite(.timeLimit(.minutes(1)))
struct SenderPredictionTests {
    /// Players take turns: only the player whose turn it is may play.
    struct Turns: ContextualReducer {
        struct State: Codable, Equatable, Sendable {
            var turn = "alice"
            var moves: [String] = []
        }
        enum Action: Codable, Sendable { case play }

        var initialState: State { State() }

        func reduce(
            into state: inout State, action: Action, context: ReducerContext
        ) throws(Rejection) -> Effect<Action> {
            guard let player = context.sender?.subject, player == state.turn else {
                throw Rejection("it is \(state.turn)'s turn")
            }
            state.moves.append(player)
            state.turn = player == "alice" ? "bob" : "alice"
            return .none
        }
    }

    static let secret = Array("0123456789abcdef0123456789abcdef-predict".utf8)

    @Test func aPlayThatTheSendersTurnAllowsShowsBeforeTheServerAnswers() async throws {
        let tokens = try await TokenAuthority(secret: Self.secret)
        let alice = try await tokens.issue(room: "game", role: .write, lifetime: .seconds(300), subject: "alice")
        // Offline (nothing listens there): the prediction alone shows the move.
        let offline = try SharedStore(Turns(), url: "ws://127.0.0.1:9/rooms/game?token=\(alice)")
        #expect(offline.room.sender.subject == "alice")
        #expect(offline.room.sender.role == "write")
        try await offline.enqueue(.play)
        try await waitUntil("the play to be predicted") { offline.state.moves == ["alice"] }
        #expect(offline.state.turn == "bob")
        await offline.close()

        // Online, the server confirms exactly what was predicted.
        let app = App("turns", summary: "turns", reducer: Turns())
        try await withServer(app: app, configure: { $0.tokens = tokens }) { server in
            let store = try SharedStore(Turns(), url: roomURL(server, "game") + "?token=\(alice)")
            try await store.connect()
            try await store.send(.play)
            #expect(store.confirmedState == Turns.State(turn: "bob", moves: ["alice"]))
            #expect(store.state == store.confirmedState)
            await store.close()
        }
    }
}
