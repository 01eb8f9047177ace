import LockstepApps
import LockstepCore
import LockstepTesting
import Testing

/// A test store runs each step as the server would: its own version, a later time, the random numbers of that version;
/// and a compensation knows whose move it takes back.
@MainActor @Suite struct ServerContextTests {
    /// Deals each player a card from the context's random source, and keeps who played when.
    struct Dealer: ContextualReducer, CompensatingReducer {
        struct State: Codable, Equatable, Sendable {
            var hands: [String: Int] = [:]
            var times: [Int] = []
            var versions: [Int] = []
        }
        enum Action: Codable, Equatable, Sendable {
            case deal
            case fold(player: String)
        }

        var initialState: State { State() }

        func reduce(
            into state: inout State, action: Action, context: ReducerContext
        ) throws(Rejection) -> Effect<Action> {
            switch action {
            case .deal:
                var random = context.random
                state.hands[context.sender?.subject ?? "nobody"] = Int.random(in: 0..<1_000_000, using: &random)
            case .fold(let player):
                state.hands[player] = nil
            }
            state.times.append(context.time)
            state.versions.append(context.version)
            return .none
        }

        /// A deal is taken back by folding the hand of whoever was dealt, read from the change's context.
        func compensation(for action: Action, in state: State, context: ReducerContext) -> Action? {
            guard case .deal = action, let player = context.sender?.subject else { return nil }
            return .fold(player: player)
        }

        func compensate(_ state: inout State, with compensation: Action) throws(Conflict) -> Action? {
            guard case .fold(let player) = compensation, state.hands[player] != nil else {
                throw Conflict("nothing to fold")
            }
            state.hands[player] = nil
            return nil
        }
    }

    static let alice = ReducerContext(sender: Sender(client: "c1", session: "a", subject: "alice"))
    static let bob = ReducerContext(sender: Sender(client: "c2", session: "b", subject: "bob"))

    @Test func eachStepGetsItsOwnVersionTimeAndRandomNumbers() {
        let store = TestStore(Dealer(), now: 1_000_000, timeStep: .seconds(2))
        var dealt: [String: Int] = [:]
        var random = SeededRandom(epoch: "test", version: 1)
        dealt["alice"] = Int.random(in: 0..<1_000_000, using: &random)
        store.send(.deal, context: Self.alice) {
            $0.hands = dealt
            $0.times = [1_000_000]
            $0.versions = [1]
        }
        store.advance(by: .seconds(10))
        random = SeededRandom(epoch: "test", version: 2)
        dealt["bob"] = Int.random(in: 0..<1_000_000, using: &random)
        store.send(.deal, context: Self.bob) {
            $0.hands = dealt
            $0.times = [1_000_000, 1_012_000]
            $0.versions = [1, 2]
        }
        #expect(dealt["alice"] != dealt["bob"], "alice and bob were dealt the same card")
    }

    @Test func aContextsOwnTimeIsKeptButNeverGoesBack() {
        let store = TestStore(Dealer(), now: 5_000)
        var late = Self.alice
        late.time = 9_000
        var early = Self.bob
        early.time = 7_000
        store.send(.fold(player: "x"), context: late) {
            $0.times = [9_000]
            $0.versions = [1]
        }
        store.send(.fold(player: "y"), context: early) {
            $0.times = [9_000, 9_000]
            $0.versions = [1, 2]
        }
    }

    @Test func aCompensationReadsWhoseChangeItTakesBack() {
        let store = TestStore(Dealer(), now: 0, timeStep: .milliseconds(1))
        let cards = (1...2).map { version in
            var random = SeededRandom(epoch: "test", version: version)
            return Int.random(in: 0..<1_000_000, using: &random)
        }
        store.send(.deal, context: Self.alice) {
            $0.hands = ["alice": cards[0]]
            $0.times = [0]
            $0.versions = [1]
        }
        store.send(.deal, context: Self.bob) {
            $0.hands["bob"] = cards[1]
            $0.times = [0, 1]
            $0.versions = [1, 2]
        }
        // Alice's deal is folded by its compensation, which named her from the change's context.
        store.undoMine(as: Self.alice) { $0.hands["alice"] = nil }
    }
}
