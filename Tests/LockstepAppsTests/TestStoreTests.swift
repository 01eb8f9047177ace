import LockstepApps
import LockstepCore
import LockstepTesting
import Testing

/// The test helper itself must fail when a reducer does something the test did not state.
@MainActor @Suite struct TestStoreTests {
    @Test func aChangeTheTestDidNotDescribeFails() {
        withKnownIssue {
            let store = TestStore(Counter())
            store.send(.increment) { $0.count = 2 }
        }
    }

    @Test func aRejectionWhereAChangeWasExpectedFails() {
        withKnownIssue {
            let store = TestStore(Counter(), state: Counter.State(count: .max))
            store.send(.increment) { $0.count = .max }
        }
    }

    @Test func anAcceptedActionExpectedToBeRejectedFails() {
        withKnownIssue {
            let store = TestStore(Counter())
            store.reject(.increment)
        }
    }

    @Test func aRejectionWithAnotherMessageFails() {
        withKnownIssue {
            let store = TestStore(Todos())
            store.reject(.toggle(id: 3), message: "something else")
        }
    }

    @Test func undoWithNothingToUndoFails() {
        withKnownIssue {
            let store = TestStore(Counter())
            store.undo { _ in }
        }
    }

    @Test func undoMineTakesBackOnlyTheSendersChange() {
        let alice = ReducerContext(sender: Sender(client: "c1", session: "alice"))
        let bob = ReducerContext(sender: Sender(client: "c2", session: "bob"))
        let store = TestStore(Todos())
        store.send(.add(title: "milk"), context: alice) {
            $0 = Todos.State(items: [.init(id: 1, title: "milk")], nextId: 2)
        }
        store.send(.add(title: "bread"), context: bob) {
            $0.items.append(.init(id: 2, title: "bread"))
            $0.nextId = 3
        }
        store.undoMine(as: alice) { $0.items.removeFirst() }
        store.redoMine(as: alice) { $0.items.insert(.init(id: 1, title: "milk"), at: 0) }
    }

    @Test func advancingTheClockFiresAScheduledTimerAsItsSchedulersChange() {
        let alice = ReducerContext(sender: Sender(client: "c1", name: "alice"))
        let store = TestStore(Turns(), now: 1_000_000, timeStep: .zero)
        store.send(.move, context: alice) { $0.moves = 1 }
        #expect(store.pendingTimers.map(\.name) == ["turn"])
        #expect(store.pendingTimers.first?.due == 1_030_000)
        store.advance(by: .seconds(29))
        #expect(store.unreceivedActions.isEmpty, "not due yet")
        store.advance(by: .seconds(1))
        #expect(store.pendingTimers.isEmpty)
        store.receive(.timeout) {
            $0.timeouts = 1
            $0.lastTimeout = Turns.State.Stamp(by: "alice", at: 1_030_000)
        }
        store.finish()
    }

    @Test func aMoveAgainReplacesTheTimerAndCancelTakesItAway() {
        let store = TestStore(Turns(), now: 0, timeStep: .zero)
        store.send(.move) { $0.moves = 1 }
        store.advance(by: .seconds(20))
        store.send(.move) { $0.moves = 2 }
        store.advance(by: .seconds(20))
        #expect(store.unreceivedActions.isEmpty, "the second move pushed the timeout back")
        #expect(store.pendingTimers.map(\.due) == [50_000])
        store.send(.stop) { _ in }
        #expect(store.pendingTimers.isEmpty)
        store.advance(by: .seconds(60))
        #expect(store.unreceivedActions.isEmpty)
    }

    @Test func timersDueTogetherFireInTheOrderTheyWereScheduled() {
        let store = TestStore(Turns(), now: 0, timeStep: .zero)
        store.send(.remind(after: .seconds(5))) { _ in }
        store.send(.remind(after: .seconds(3))) { _ in }
        store.send(.remind(after: .seconds(5))) { _ in }
        #expect(store.pendingTimers.map(\.name) == ["t-2", "t-1", "t-3"])
        store.advance(by: .seconds(10))
        #expect(store.unreceivedActions == [.reminded(after: 3), .reminded(after: 5), .reminded(after: 5)])
        store.receive(.reminded(after: 3)) { $0.reminders = [3] }
        store.receive(.reminded(after: 5)) { $0.reminders = [3, 5] }
        store.receive(.reminded(after: 5)) { $0.reminders = [3, 5, 5] }
    }

    @Test func aFiredTimerNotReceivedFailsTheFinish() {
        withKnownIssue {
            let store = TestStore(Turns(), timeStep: .zero)
            store.send(.move) { $0.moves = 1 }
            store.advance(by: .seconds(30))
            store.finish()
        }
    }

    @Test func aTimerThatDidNotFireCannotBeReceived() {
        withKnownIssue {
            let store = TestStore(Turns(), timeStep: .zero)
            store.send(.move) { $0.moves = 1 }
            store.advance(by: .seconds(10))
            store.receive(.timeout) { $0.timeouts = 1 }
        }
    }

    @Test func undoMineWithNothingOfTheSendersFails() {
        withKnownIssue {
            let store = TestStore(Counter())
            store.send(.increment, context: ReducerContext(sender: Sender(client: "c1"))) { $0.count = 1 }
            store.undoMine(as: ReducerContext(sender: Sender(client: "c2"))) { $0.count = 0 }
        }
    }
}

/// A turn that times out: `move` (re)starts a 30-second timer "turn" whose `timeout` records who and when, `stop`
/// cancels it; `remind` schedules unnamed timers.
private struct Turns: ContextualReducer {
    struct State: Codable, Equatable, Sendable {
        struct Stamp: Codable, Equatable, Sendable {
            var by: String?
            var at: Int
        }

        var moves = 0
        var timeouts = 0
        var lastTimeout: Stamp?
        var reminders: [Int] = []
    }

    enum Action: Codable, Equatable, Sendable {
        case move
        case timeout
        case stop
        case remind(after: Duration)
        case reminded(after: Int)
    }

    var initialState: State { State() }

    func reduce(into state: inout State, action: Action, context: ReducerContext) throws(Rejection) -> Effect<Action> {
        switch action {
        case .move:
            state.moves += 1
            return .schedule(.timeout, after: .seconds(30), timer: "turn")
        case .timeout:
            state.timeouts += 1
            state.lastTimeout = State.Stamp(by: context.sender?.name, at: context.time)
            return .none
        case .stop:
            return .cancel(timer: "turn")
        case .remind(let delay):
            return .schedule(.reminded(after: Int(delay / .seconds(1))), after: delay)
        case .reminded(let seconds):
            state.reminders.append(seconds)
            return .none
        }
    }
}
