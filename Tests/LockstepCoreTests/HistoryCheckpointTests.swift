import LockstepCore
import LockstepJSON
import Testing

/// A history's checkpoint: changes made after it are taken back exactly, without a copy of the history.
@Suite struct HistoryCheckpointTests {
    static let alice = ReducerContext(sender: Sender(client: "c1", session: "alice"), time: 10)
    static let bob = ReducerContext(sender: Sender(client: "c2", session: "bob"), time: 20)
    static let nobody = ReducerContext(time: 30)
    /// The board as a new room has it, for reverts.
    static let initial = try! Store(reducer: Board()).stateJSON()

    /// One random request: an action, a global undo or redo, an undo or redo mine, or a revert, by a random sender.
    static func step(_ store: inout Store<Board>, _ random: inout SeededRandom) {
        let context = [alice, bob, nobody][Int.random(in: 0..<3, using: &random)]
        let title = "t\(Int.random(in: 0..<4, using: &random))"
        switch Int.random(in: 0..<8, using: &random) {
        case 0: _ = try? store.undo(context: context)
        case 1: _ = try? store.redo(context: context)
        case 2: _ = try? store.undoMine(context: context)
        case 3: _ = try? store.redoMine(context: context)
        case 4: _ = try? store.revert(to: 0, state: initial, context: context)
        case 5: _ = try? store.send(.addCard(at: 0, text: title), context: context)
        default: _ = try? store.send(.rename(title), context: context)
        }
    }

    /// Whatever came before and whatever the changes after it, rolling back to a checkpoint gives the history as it
    /// was, undo depth overflowing, redo sides emptied and author records trimmed included.
    @Test(arguments: 0..<300) func rollingBackToACheckpointRestoresTheHistoryExactly(seed: Int) throws {
        var random = SeededRandom(epoch: "checkpoint", version: seed)
        let depth = Int.random(in: 1...5, using: &random)
        var store = Store(reducer: Board(), history: History(depth: depth))
        for _ in 0..<Int.random(in: 0..<30, using: &random) { Self.step(&store, &random) }
        let before = store.history
        store.setHistoryCheckpoint()
        #expect(store.history.hasCheckpoint)
        for _ in 0..<Int.random(in: 0..<12, using: &random) { Self.step(&store, &random) }
        var history = store.history
        history.rollBackToCheckpoint()
        #expect(!history.hasCheckpoint)
        #expect(history == before)
        #expect(history.undoStack == before.undoStack)
        #expect(history.redoStack == before.redoStack)
        #expect(history.authors == before.authors)
    }

    /// Keeping changes behind a checkpoint changes nothing about them: the history is the one made without it.
    @Test(arguments: 0..<100) func aReleasedCheckpointLeavesTheHistoryAsWithoutOne(seed: Int) throws {
        var random = SeededRandom(epoch: "released", version: seed)
        var plain = Store(reducer: Board(), history: History(depth: 3))
        var checked = plain
        for round in 0..<40 {
            if round % 7 == 0 { checked.setHistoryCheckpoint() }
            if round % 7 == 5 { checked.releaseHistoryCheckpoint() }
            var same = random
            Self.step(&plain, &random)
            Self.step(&checked, &same)
        }
        checked.releaseHistoryCheckpoint()
        #expect(!checked.history.hasCheckpoint)
        #expect(checked.history == plain.history)
        #expect(checked.state == plain.state)
    }

    @Test func withoutACheckpointRollingBackChangesNothing() throws {
        var store = Store(reducer: Board(), history: History(depth: 2))
        _ = try store.send(.rename("one"), context: Self.alice)
        var history = store.history
        history.rollBackToCheckpoint()
        #expect(history == store.history)
        #expect(history.undoCount == 1)
    }

    @Test func aNewCheckpointReplacesTheOldOne() throws {
        var store = Store(reducer: Board(), history: History(depth: 4))
        store.setHistoryCheckpoint()
        _ = try store.send(.rename("one"), context: Self.alice)
        let between = store.history
        store.setHistoryCheckpoint()
        _ = try store.send(.rename("two"), context: Self.bob)
        var history = store.history
        history.rollBackToCheckpoint()
        #expect(history == between)
        #expect(history.undoCount == 1)
    }

    @Test func aCheckpointIsNotPartOfTheValueCompared() throws {
        var store = Store(reducer: Board(), history: History(depth: 4))
        let plain = store.history
        store.setHistoryCheckpoint()
        #expect(store.history == plain)
        #expect(store.history.hasCheckpoint != plain.hasCheckpoint)
    }

    @Test func anUndoMineAndItsRedoMineAreTakenBackWithTheRecordsTheyMarked() throws {
        var store = Store(reducer: Board(), history: History(depth: 10))
        _ = try store.send(.rename("mine"), context: Self.alice)
        _ = try store.send(.addCard(at: 0, text: "theirs"), context: Self.bob)
        let before = store.history
        store.setHistoryCheckpoint()
        _ = try store.undoMine(context: Self.alice)
        _ = try store.redoMine(context: Self.alice)
        _ = try store.undo(context: Self.bob)
        #expect(store.history.authors != before.authors)
        var history = store.history
        history.rollBackToCheckpoint()
        #expect(history.authors == before.authors)
        #expect(history == before)
    }
}
