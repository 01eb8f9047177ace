import LockstepApps
import LockstepCore
import LockstepJSON
import Testing

/// Undo mine as a property: whatever two authors did in whatever interleaving, once the first has taken back all
/// its changes, the room is what the second's actions alone would make of it.
@Suite struct UndoMinePropertyTests {
    static let alice = ReducerContext(sender: Sender(client: "c1", session: "alice"))
    static let bob = ReducerContext(sender: Sender(client: "c2", session: "bob"))

    /// Takes back every change of `context`'s author still in effect.
    static func undoAll<R: Reducer>(in store: inout Store<R>, as context: ReducerContext) throws {
        while true {
            do {
                _ = try store.undoMine(context: context)
            } catch .nothingToUndo {
                return
            }
        }
    }

    /// Each change's inverse takes the room back exactly, undo mine and redo mine included: theirs are recorded as
    /// applied to a room that moved on (a copy whose source changed since, a move onto a place rewritten since), not
    /// read off the original change.
    @Test(arguments: 0..<100) func everyChangesInverseRestoresTheRoomBeforeIt(seed: Int) throws {
        var random = SeededRandom(epoch: "inverses", version: seed)
        let places = ["/a", "/b", "/c", "/list/0", "/list/-"]
        var store = Store(reducer: JSONDocument(), state: ["a": 1, "b": 2, "list": [0, 1]])
        for _ in 0..<40 {
            let context = Bool.random(using: &random) ? Self.alice : Self.bob
            let from = places[Int.random(in: 0..<3, using: &random)]
            let to = places[Int.random(in: 0..<places.count, using: &random)]
            let value = Int.random(in: 0..<100, using: &random)
            let ops = switch Int.random(in: 0..<4, using: &random) {
            case 0: #"[{"op":"copy","from":"\#(from)","path":"\#(to)"}]"#
            case 1: #"[{"op":"move","from":"\#(from)","path":"\#(to)"}]"#
            default: #"[{"op":"add","path":"\#(to)","value":\#(value)}]"#
            }
            let before = store.state
            let change: Change?
            switch Int.random(in: 0..<5, using: &random) {
            case 0: change = try? store.undoMine(context: context)
            case 1: change = try? store.redoMine(context: context)
            case 2: change = try? store.undo()
            default:
                let patch = try JSONPatch(json: JSON(parsing: Array(ops.utf8)))
                change = (try? store.send(JSONDocument.Action(ops: patch), context: context))?.change
            }
            guard let change else { continue }
            var restored = store.state
            try change.inverse.apply(to: &restored)
            #expect(restored == before, "\(change.kind) of version \(change.version)")
        }
    }

    @Test(arguments: 0..<200) func aliceUndoingAllHerCounterChangesLeavesBobsAlone(seed: Int) throws {
        var random = SeededRandom(epoch: "counter", version: seed)
        var shared = Store(reducer: Counter())
        var bobAlone = Store(reducer: Counter())
        for _ in 0..<Int.random(in: 1...40, using: &random) {
            let action: Counter.Action = switch Int.random(in: 0..<3, using: &random) {
            case 0: .increment
            case 1: .decrement
            default: .add(amount: Int.random(in: -50...50, using: &random))
            }
            let byAlice = Bool.random(using: &random)
            if byAlice {
                switch Int.random(in: 0..<6, using: &random) {
                case 0: _ = try? shared.undoMine(context: Self.alice)
                case 1: _ = try? shared.redoMine(context: Self.alice)
                default: _ = try shared.send(action, context: Self.alice)
                }
            } else {
                _ = try shared.send(action, context: Self.bob)
                _ = try bobAlone.send(action, context: Self.bob)
            }
        }
        try Self.undoAll(in: &shared, as: Self.alice)
        #expect(shared.state == bobAlone.state)
    }

    @Test(arguments: 0..<200) func aliceUndoingAllHerTodosChangesLeavesBobsItemsTitlesAndDoneFlags(seed: Int) throws {
        var random = SeededRandom(epoch: "todos", version: seed)
        var shared = Store(reducer: Todos())
        var bobAlone = Store(reducer: Todos())
        // Each author's items, in the order added, in each store: actions name them by position.
        var aliceItems: [Int] = []
        var bobItems: (shared: [Int], alone: [Int]) = ([], [])
        for step in 0..<Int.random(in: 1...40, using: &random) {
            let byAlice = Bool.random(using: &random)
            let kind = Int.random(in: 0..<5, using: &random)
            let pick = Int.random(in: 0..<1000, using: &random)
            let title = "t\(step)"
            func action(_ items: [Int], in state: Todos.State) -> Todos.Action {
                let live = items.filter { id in state.items.contains { $0.id == id } }
                guard kind > 0, !live.isEmpty else { return .add(title: title) }
                let id = live[pick % live.count]
                switch kind {
                case 1: return .toggle(id: id)
                case 2: return .rename(id: id, title: title)
                default: return .remove(id: id)
                }
            }
            if byAlice {
                if pick % 7 == 0 {
                    _ = try? shared.undoMine(context: Self.alice)
                } else if pick % 7 == 1 {
                    _ = try? shared.redoMine(context: Self.alice)
                } else {
                    let next = action(aliceItems, in: shared.state)
                    if case .add = next { aliceItems.append(shared.state.nextId) }
                    _ = try shared.send(next, context: Self.alice)
                }
            } else {
                let inShared = action(bobItems.shared, in: shared.state)
                let alone = action(bobItems.alone, in: bobAlone.state)
                if case .add = inShared {
                    bobItems.shared.append(shared.state.nextId)
                    bobItems.alone.append(bobAlone.state.nextId)
                }
                _ = try shared.send(inShared, context: Self.bob)
                _ = try bobAlone.send(alone, context: Self.bob)
            }
        }
        try Self.undoAll(in: &shared, as: Self.alice)
        let seen = shared.state.items.map { [$0.title, "\($0.done)"] }
        let expected = bobAlone.state.items.map { [$0.title, "\($0.done)"] }
        #expect(seen == expected)
    }
}
