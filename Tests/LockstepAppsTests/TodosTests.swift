import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepTesting
import Testing

@MainActor @Suite struct TodosTests {
    @Test func addHandsOutIncreasingIds() {
        let store = TestStore(Todos())
        store.send(.add(title: "milk")) {
            $0.items = [Todos.Item(id: 1, title: "milk")]
            $0.nextId = 2
        }
        store.send(.add(title: "eggs")) {
            $0.items.append(Todos.Item(id: 2, title: "eggs"))
            $0.nextId = 3
        }
    }

    @Test func toggleRenameAndRemoveFindItemsById() {
        let store = TestStore(
            Todos(), state: Todos.State(items: [.init(id: 4, title: "a"), .init(id: 9, title: "b")], nextId: 10))
        store.send(.toggle(id: 9)) { $0.items[1].done = true }
        store.send(.rename(id: 4, title: "A")) { $0.items[0].title = "A" }
        store.send(.remove(id: 4)) { $0.items.remove(at: 0) }
    }

    @Test func clearCompletedRemovesDoneItemsOnly() {
        let items: [Todos.Item] = [
            .init(id: 1, title: "a", done: true), .init(id: 2, title: "b"), .init(id: 3, title: "c", done: true),
        ]
        let store = TestStore(Todos(), state: Todos.State(items: items, nextId: 4))
        store.send(.clearCompleted) { $0.items = [.init(id: 2, title: "b")] }
    }

    @Test func unknownIdsAndBlankTitlesAreRejected() {
        let store = TestStore(Todos(), state: Todos.State(items: [.init(id: 1, title: "a")], nextId: 2))
        store.reject(.toggle(id: 7), message: "no todo with id 7")
        store.reject(.rename(id: 7, title: "x"), message: "no todo with id 7")
        store.reject(.remove(id: 7), message: "no todo with id 7")
        store.reject(.add(title: ""), message: "a title cannot be empty")
        store.reject(.add(title: " \t\n"), message: "a title cannot be empty")
        store.reject(.rename(id: 1, title: "   "), message: "a title cannot be empty")
    }

    @Test func theWireShapeMatchesTheProtocol() throws {
        #expect(try JSON(encoding: Todos().initialState) == ["items": [], "nextId": 1])
        #expect(
            try (["type": "rename", "id": 2, "title": "x"] as JSON).decode(Todos.Action.self)
                == .rename(id: 2, title: "x"))
        #expect(try (["type": "clearCompleted"] as JSON).decode(Todos.Action.self) == .clearCompleted)
        #expect(throws: DecodingError.self) { try (["type": "toggle"] as JSON).decode(Todos.Action.self) }
        let item = try JSON(encoding: Todos.Item(id: 1, title: "t"))
        #expect(item == ["id": 1, "title": "t", "done": false])
    }

    @Test func aToggleInALargeListIsOneReplace() throws {
        let items = (1...10_000).map { Todos.Item(id: $0, title: "item \($0)") }
        var store = Store(reducer: Todos(), state: Todos.State(items: items, nextId: 10_001))
        let change = try #require(try store.send(.toggle(id: 5_000)).change)
        #expect(
            change.patch == JSONPatch([.replace(path: JSONPointer(tokens: ["items", "4999", "done"]), value: true)]))
    }
}
