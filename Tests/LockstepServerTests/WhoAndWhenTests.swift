import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import LockstepTesting
import Testing

/// A board whose cards remember who added them and when, with a random colour: a reducer that reads its context.
struct Board: ContextualReducer {
    struct Card: Codable, Equatable, Sendable {
        var id: Int
        var title: String
        var author: String?
        var at: Int
        var color: Int
    }

    struct State: Codable, Equatable, Sendable {
        var cards: [Card] = []
        var nextId = 1
    }

    enum Action: Codable, Equatable, Sendable {
        case add(title: String)
        case remove(id: Int)
    }

    var initialState: State { State() }

    func reduce(into state: inout State, action: Action, context: ReducerContext) throws(Rejection) -> Effect<Action> {
        switch action {
        case .add(let title):
            var random = context.random
            let color = Int.random(in: 0..<1_000_000, using: &random)
            state.cards.append(
                Card(id: state.nextId, title: title, author: context.sender?.subject, at: context.time, color: color))
            state.nextId += 1
        case .remove(let id):
            state.cards.removeAll { $0.id == id }
        }
        return .none
    }

    /// The documented middleware example: only a card's author may remove it.
    static let onlyAuthorsRemove = Board().middleware { state, action, context throws(Rejection) in
        if case .remove(let id) = action, let card = state.cards.first(where: { $0.id == id }),
            card.author != context.sender?.subject
        {
            throw Rejection("only \(card.author ?? "its author") may remove card \(id)")
        }
        return action
    }

    static let app = App("board", summary: "cards with authors", reducer: onlyAuthorsRemove)
}

/// Who and when: every cause says when the change was applied and who sent it, and reducers see the same.
@Suite(.timeLimit(.minutes(2))) struct WhoAndWhenTests {
    static func now() -> Int { Int(Date().timeIntervalSince1970 * 1000) }

    static func tokens() async throws -> TokenAuthority { try await TokenAuthority(secret: AccessTests.secret) }

    @Test func everyCauseCarriesItsTimeNameAndSubjectInPatchesHistoryAndTheLog() async throws {
        let tokens = try await Self.tokens()
        let token = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(60), subject: "alice-id")
        try await withServer(app: .counter, configure: { $0.tokens = tokens }) { server in
            let alice = try await Writer.connect(server.port, name: "alice", token: token)
            let before = Self.now()
            let patch = try await alice.change(#"{"type":"action","action":{"type":"increment"}}"#)
            let undo = try await alice.change(#"{"type":"undo"}"#)
            let after = Self.now()
            for cause in [patch["cause"], undo["cause"]] {
                let at = try #require(cause?["at"]?.intValue)
                #expect((before...after).contains(at))
                #expect(cause?["name"] == "alice")
                #expect(cause?["sub"] == "alice-id")
            }
            alice.client.sendRaw(#"{"type":"history","id":"h"}"#)
            let history = try await alice.client.nextJSON(type: "history")
            #expect(history["entries"]?.arrayValue?.map { $0["cause"] } == [patch["cause"], undo["cause"]])

            let log = try await HTTPGet(
                port: server.port, path: "/rooms/test/log?after=0", headers: ["Authorization: Bearer \(token)"])
            let recording = try Recording(ndjson: log.body)
            #expect(recording.steps.map(\.cause.json) == [patch["cause"], undo["cause"]].compactMap { $0 })
            #expect(!recording.epoch.isEmpty)
        }
    }

    @Test func aClientWithoutNameOrTokenHasNeither() async throws {
        try await withServer(app: .counter) { server in
            let client = try await Writer.connect(server.port)
            let cause = try await client.change(#"{"type":"action","action":{"type":"increment"}}"#)["cause"]
            #expect(cause?["at"]?.intValue != nil)
            #expect(cause?["name"] == nil)
            #expect(cause?["sub"] == nil)
        }
    }

    @Test func theTimeNeverGoesDownWhenTheClockGoesBackAcrossARestart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let future = Self.now() + 3_600_000
        let first = try await withStoredServer(
            in: directory, clock: ServerClock(ContinuousClock(), startingAt: future)
        ) { server in
            let client = try await Writer.connect(server.port)
            let patch = try await client.change(#"{"type":"action","action":{"type":"increment"}}"#)
            return patch["cause"]?["at"]?.intValue
        }
        let later = try await withStoredServer(in: directory) { server in
            let client = try await Writer.connect(server.port)
            let patch = try await client.change(#"{"type":"action","action":{"type":"increment"}}"#)
            return patch["cause"]?["at"]?.intValue
        }
        let (ahead, next) = (try #require(first), try #require(later))
        #expect(ahead >= future)
        #expect(next >= ahead)
    }

    @Test func aReducerSeesItsSenderTimeAndARandomSourceAndAReplayReproducesThem() async throws {
        let tokens = try await Self.tokens()
        let aliceToken = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(60), subject: "alice")
        let bobToken = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(60), subject: "bob")
        try await withServer(app: Board.app, configure: { $0.tokens = tokens }) { server in
            let alice = try await Writer.connect(server.port, token: aliceToken)
            let bob = try await Writer.connect(server.port, token: bobToken)
            let added = try await alice.change(#"{"type":"action","action":{"add":{"title":"plan"}}}"#)
            try await bob.action(#"{"add":{"title":"notes"}}"#)
            try await alice.action(#"{"add":{"title":"draft"}}"#)

            let refused = try await bob.action(#"{"remove":{"id":1}}"#)
            #expect(refused["code"] == "rejected")
            #expect(refused["message"] == "only alice may remove card 1")
            try await alice.action(#"{"remove":{"id":3}}"#)

            let state = try #require(try await roomState(server.port, token: aliceToken)?.decode(Board.State.self))
            #expect(state.cards.map(\.author) == ["alice", "bob"])
            #expect(state.cards[0].at == added["cause"]?["at"]?.intValue)
            #expect(state.cards[0].color != state.cards[1].color)

            let log = try await HTTPGet(
                port: server.port, path: "/rooms/test/log?after=0", headers: ["Authorization: Bearer \(aliceToken)"])
            let recording = try Recording(ndjson: log.body)
            #expect(RecordingReplay(Board.onlyAuthorsRemove).firstDifference(in: recording) == nil)
            // Without the recorded times the cards' times differ: the replay does rely on them.
            var untimed = recording
            for index in untimed.steps.indices { untimed.steps[index].cause.at = nil }
            #expect(RecordingReplay(Board.onlyAuthorsRemove).firstDifference(in: untimed)?.version == 1)
        }
    }

    @Test func theMiddlewareRefusesInATestStoreWithoutAServer() throws {
        var store = Store(reducer: Board.onlyAuthorsRemove)
        let alice = ReducerContext(sender: Sender(client: "c1", subject: "alice"), time: 5, version: 1, epoch: "e")
        let bob = ReducerContext(sender: Sender(client: "c2", subject: "bob"), time: 6, version: 2, epoch: "e")
        _ = try store.send(.add(title: "plan"), context: alice)
        #expect(throws: StoreError.rejected("only alice may remove card 1")) {
            try store.send(.remove(id: 1), context: bob)
        }
        #expect(store.state.cards.count == 1)
        #expect(store.state.cards[0].at == 5)
    }
}
