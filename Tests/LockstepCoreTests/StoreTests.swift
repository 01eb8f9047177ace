import LockstepCore
import LockstepJSON
import Testing
import LockstepTestSupport

@Suite struct StoreTests {
    @Test func aChangeGetsTheNextVersionAndAPatch() throws {
        var store = Store(reducer: Board())
        let change = try #require(try store.send(.rename("plans")).change)
        #expect(change.version == 1)
        #expect(change.kind == .action)
        #expect(change.patch == JSONPatch([.replace(path: JSONPointer(tokens: ["title"]), value: "plans")]))
        #expect(store.version == 1)
        #expect(store.history.undoCount == 1)
    }

    @Test func aNoOpMakesNoVersionAndKeepsTheRedoSide() throws {
        var store = Store(reducer: Board())
        _ = try store.send(.rename("plans"))
        _ = try store.undo()
        #expect(store.history.redoCount == 1)
        let result = try store.send(.rename("board"))
        #expect(result.change == nil)
        #expect(store.version == 2)
        #expect(store.history.redoCount == 1)
    }

    @Test func aRejectedActionLeavesTheStateAsItWas() throws {
        var store = Store(reducer: Board())
        #expect(throws: StoreError.rejected("refused")) { try store.send(.reject) }
        #expect(store.state == Board().initialState)
        #expect(store.version == 0)
    }

    @Test func anUndecodableActionIsInvalid() throws {
        var store = Store(reducer: Board())
        #expect(throws: StoreError.self) { try store.send(json: ["nonsense": true]) }
        do {
            _ = try store.send(json: 42)
            Issue.record("a number decoded as an action")
        } catch {
            #expect(error.code == "invalid_action")
        }
    }

    @Test func undoAndRedoAreNewVersionsThatNameTheOriginal() throws {
        var store = Store(reducer: Board())
        _ = try store.send(.rename("one"))
        _ = try store.send(.rename("two"))
        let undo = try store.undo()
        #expect(undo.version == 3)
        #expect(undo.kind == .undo(of: 2))
        #expect(store.state.title == "one")
        let redo = try store.redo()
        #expect(redo.version == 4)
        #expect(redo.kind == .redo(of: 2))
        #expect(store.state.title == "two")
        #expect(throws: StoreError.nothingToRedo) { try store.redo() }
    }

    @Test func aNewChangeEmptiesTheRedoSide() throws {
        var store = Store(reducer: Board())
        _ = try store.send(.rename("one"))
        _ = try store.undo()
        _ = try store.send(.rename("other"))
        #expect(store.history.redoCount == 0)
        #expect(throws: StoreError.nothingToRedo) { try store.redo() }
    }

    @Test func theUndoDepthIsBounded() throws {
        var store = Store(reducer: Board(), history: History(depth: 3))
        for index in 0..<10 { _ = try store.send(.rename("title \(index)")) }
        #expect(store.history.undoCount == 3)
        for _ in 0..<3 { _ = try store.undo() }
        #expect(store.state.title == "title 6")
        #expect(throws: StoreError.nothingToUndo) { try store.undo() }
    }

    @Test func aZeroDepthDisablesUndo() throws {
        var store = Store(reducer: Board(), history: History(depth: 0))
        _ = try store.send(.rename("one"))
        #expect(throws: StoreError.nothingToUndo) { try store.undo() }
    }

    /// Random actions, undos and redos against a model that keeps every state it has seen.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomHistoriesMatchAModelOfStates(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let depth = 5
        var store = Store(reducer: Board(), history: History(depth: depth))
        var undoModel: [Board.State] = []
        var redoModel: [Board.State] = []
        var document = try store.stateJSON()

        for _ in 0..<400 {
            let before = store.state
            let change: Change?
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<2:
                change = try? store.undo()
                if let previous = undoModel.popLast() {
                    #expect(store.state == previous)
                    redoModel.append(before)
                } else {
                    #expect(change == nil)
                }
            case 2..<3:
                change = try? store.redo()
                if let next = redoModel.popLast() {
                    #expect(store.state == next)
                    undoModel.append(before)
                } else {
                    #expect(change == nil)
                }
            default:
                let action = Board.randomAction(using: &random, cards: store.state.cards.count)
                change = (try? store.send(action))?.change
                if change != nil {
                    undoModel.append(before)
                    if undoModel.count > depth { undoModel.removeFirst() }
                    redoModel.removeAll()
                } else {
                    #expect(store.state == before)
                }
            }
            if let change {
                try change.patch.apply(to: &document)
            }
            #expect(document == (try store.stateJSON()))
            #expect(store.history.undoCount == undoModel.count)
            #expect(store.history.redoCount == redoModel.count)
        }
    }

    @Test func theSameRequestsGiveTheSameVersionsAndPatches() throws {
        func run() throws -> [Change] {
            var random = SplitMix64(seed: 99)
            var store = Store(reducer: Board())
            var changes: [Change] = []
            for step in 0..<200 {
                if step % 7 == 0, let change = try? store.undo() { changes.append(change) }
                let action = Board.randomAction(using: &random, cards: store.state.cards.count)
                if let change = (try? store.send(action))?.change { changes.append(change) }
            }
            return changes
        }
        #expect(try run() == run())
    }
}
