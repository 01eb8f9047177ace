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

    @Test func undoMineWithNothingOfTheSendersFails() {
        withKnownIssue {
            let store = TestStore(Counter())
            store.send(.increment, context: ReducerContext(sender: Sender(client: "c1"))) { $0.count = 1 }
            store.undoMine(as: ReducerContext(sender: Sender(client: "c2"))) { $0.count = 0 }
        }
    }
}
