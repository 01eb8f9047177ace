import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepTesting
import Testing

@MainActor @Suite struct CounterTests {
    @Test func countsUpAndDown() {
        let store = TestStore(Counter())
        store.send(.increment) { $0.count = 1 }
        store.send(.add(amount: 41)) { $0.count = 42 }
        store.send(.decrement) { $0.count = 41 }
        store.send(.reset) { $0.count = 0 }
    }

    @Test func resetAtZeroIsANoOp() {
        let store = TestStore(Counter())
        let change = store.send(.reset) { _ in }
        #expect(change == nil)
        #expect(store.version == 0)
    }

    @Test func undoAndRedoWalkTheHistory() {
        let store = TestStore(Counter())
        store.send(.increment) { $0.count = 1 }
        store.send(.add(amount: 5)) { $0.count = 6 }
        store.undo { $0.count = 1 }
        store.undo { $0.count = 0 }
        store.redo { $0.count = 1 }
    }

    @Test func overflowIsRejected() {
        let store = TestStore(Counter(), state: Counter.State(count: .max))
        store.reject(.increment, message: "the count would overflow")
    }

    @Test func actionsUseTheWireShape() throws {
        #expect(try JSON(encoding: Counter.Action.add(amount: 3)) == ["type": "add", "amount": 3])
        #expect(try (["type": "decrement"] as JSON).decode(Counter.Action.self) == .decrement)
        #expect(throws: DecodingError.self) { try (["type": "add", "amount": "x"] as JSON).decode(Counter.Action.self) }
        #expect(throws: DecodingError.self) { try (["type": "explode"] as JSON).decode(Counter.Action.self) }
    }

    @Test func theInitialStateIsAZeroCount() throws {
        #expect(try JSON(encoding: Counter().initialState) == ["count": 0])
    }
}
