import LockstepApps
import LockstepCore
import LockstepJSON
import Testing

/// The todos reducer left to the store's typed differ and JSON undo: what any plain `Reducer` gets.
private struct DiffedTodos: Reducer {
    var initialState: Todos.State { Todos().initialState }
    func reduce(into state: inout Todos.State, action: Todos.Action) throws(Rejection) -> Effect<Todos.Action> {
        try Todos().reduce(into: &state, action: action)
    }
}

@Suite struct TodosPatchTests {
    /// Random actions, undos and redos on both stores; a small generator with no dependencies.
    @Test(arguments: [UInt64(1), 7, 42])
    func ownPatchesAndInPlaceUndoAgreeWithTheTypedDiffer(seed: UInt64) throws {
        var random = seed
        func next(_ upper: Int) -> Int {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((random >> 33) % UInt64(upper))
        }
        var own = Store(reducer: Todos())
        var diffed = Store(reducer: DiffedTodos())
        for round in 0..<400 {
            let before = try own.stateJSON()
            let id = next(12) + 1
            let action: Todos.Action = switch next(6) {
            case 0, 1: .add(title: "item \(round)")
            case 2: .toggle(id: id)
            case 3: .rename(id: id, title: ["a", "b"][next(2)])
            case 4: .remove(id: id)
            default: .clearCompleted
            }
            let mine = Result { () throws(StoreError) in try own.send(action).change }
            let theirs = Result { () throws(StoreError) in try diffed.send(action).change }
            #expect(own.state == diffed.state, "round \(round): \(action)")
            if case .success(let change?) = mine {
                let after = try own.stateJSON()
                #expect(try change.patch.applied(to: before) == after, "round \(round): \(action)")
                #expect(try change.inverse.applied(to: after) == before, "round \(round): \(action)")
                #expect(try theirs.get().map { try $0.patch.applied(to: before) } == after)
            }
            switch next(5) {
            case 0 where own.history.undoCount > 0:
                _ = try own.undo()
                _ = try diffed.undo()
            case 1 where own.history.redoCount > 0:
                _ = try own.redo()
                _ = try diffed.redo()
            default:
                break
            }
            #expect(own.state == diffed.state, "after undo or redo, round \(round)")
        }
    }

    @Test func aPatchOfAnotherShapeStillAppliesThroughJSON() throws {
        var state = Todos.State(items: [Todos.Item(id: 1, title: "a")], nextId: 2)
        try Todos().apply(JSONPatch([.replace(path: JSONPointer(tokens: ["items"]), value: [])]), to: &state)
        #expect(state == Todos.State(items: [], nextId: 2))
        #expect(throws: StoreError.self) {
            try Todos().apply(JSONPatch([
                .replace(path: JSONPointer(tokens: ["nextId"]), value: 5),
                .remove(path: JSONPointer(tokens: ["items", "3"])),
            ]), to: &state)
        }
        #expect(state == Todos.State(items: [], nextId: 2), "a patch that fails changes nothing")
    }
}
