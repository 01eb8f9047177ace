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
}
