import LockstepJSON
import LockstepTesting
import Testing

@testable import LockstepCore
import LockstepTestSupport

@Suite struct StateDifferTests {
    private func changes<Value: Encodable>(
        _ old: Value, _ new: Value
    ) throws -> (forward: JSONPatch, inverse: JSONPatch) {
        var differ = StateDiffer()
        try differ.diff(old, new, at: .root)
        let forward = JSONPatch(differ.forward)
        let inverse = JSONPatch(differ.inverse)
        let oldJSON = try JSON(encoding: old)
        let newJSON = try JSON(encoding: new)
        #expect(try forward.applied(to: oldJSON) == newJSON)
        #expect(try inverse.applied(to: newJSON) == oldJSON)
        return (forward, inverse)
    }

    @Test func equalStatesGiveNoOperations() throws {
        var state = Board.State()
        state.cards = (0..<100).map { Board.Card(id: $0, text: "card \($0)") }
        #expect(try changes(state, state).forward.operations.isEmpty)
    }

    @Test func oneChangedFieldIsOneReplaceAtItsPath() throws {
        let old = Board.State()
        var new = old
        new.title = "renamed"
        #expect(
            try changes(old, new).forward
                == JSONPatch([.replace(path: JSONPointer(tokens: ["title"]), value: "renamed")]))
    }

    @Test func oneChangedItemInALargeArrayIsOneOperation() throws {
        var old = Board.State()
        old.cards = (0..<10_000).map { Board.Card(id: $0, text: "card \($0)") }
        var new = old
        new.cards[4_321].votes = 7

        let (forward, inverse) = try changes(old, new)
        #expect(forward == JSONPatch([.replace(path: JSONPointer(tokens: ["cards", "4321", "votes"]), value: 7)]))
        #expect(inverse == JSONPatch([.replace(path: JSONPointer(tokens: ["cards", "4321", "votes"]), value: 0)]))
    }

    @Test func anInsertedItemIsOneAdd() throws {
        var old = Board.State()
        old.cards = (0..<1_000).map { Board.Card(id: $0, text: "card \($0)") }
        var new = old
        new.cards.insert(Board.Card(id: 5_000, text: "new"), at: 500)

        let forward = try changes(old, new).forward
        #expect(forward.operations.count == 1)
        #expect(
            forward.operations.first
                == .add(
                    path: JSONPointer(tokens: ["cards", "500"]), value: ["id": 5_000, "text": "new", "votes": 0]
                ))
    }

    @Test func aRemovedItemIsOneRemove() throws {
        var old = Board.State()
        old.cards = (0..<1_000).map { Board.Card(id: $0, text: "card \($0)") }
        var new = old
        new.cards.remove(at: 0)
        #expect(try changes(old, new).forward == JSONPatch([.remove(path: JSONPointer(tokens: ["cards", "0"]))]))
    }

    @Test func optionalMembersAppearAndDisappear() throws {
        let old = Board.State()
        var new = old
        new.owner = Board.Person(name: "ada", age: 36)
        #expect(
            try changes(old, new).forward
                == JSONPatch([
                    .add(path: JSONPointer(tokens: ["owner"]), value: ["name": "ada", "age": 36])
                ]))
        #expect(try changes(new, old).forward == JSONPatch([.remove(path: JSONPointer(tokens: ["owner"]))]))
    }

    @Test func dictionaryChangesComeInKeyOrder() throws {
        var old = Board.State()
        old.labels = ["keep": 1, "drop": 2, "change": 3]
        var new = old
        new.labels = ["keep": 1, "change": 4, "add": 5]
        #expect(
            try changes(old, new).forward
                == JSONPatch([
                    .add(path: JSONPointer(tokens: ["labels", "add"]), value: 5),
                    .replace(path: JSONPointer(tokens: ["labels", "change"]), value: 4),
                    .remove(path: JSONPointer(tokens: ["labels", "drop"])),
                ]))
    }

    @Test func enumCasesWithAssociatedValuesDiffCorrectly() throws {
        var old = Board.State()
        old.mode = .voting(round: 1, open: true)
        var new = old
        new.mode = .voting(round: 2, open: true)
        _ = try changes(old, new)
        new.mode = .editing(card: 3)
        _ = try changes(old, new)
        new.mode = .idle
        _ = try changes(old, new)
    }

    @Test func jsonStatesDiffAsJSON() throws {
        let old: JSON = ["a": [1, 2, 3], "b": ["c": true]]
        let new: JSON = ["a": [1, 2, 3, 4], "b": ["c": true]]
        #expect(try changes(old, new).forward == JSONPatch([.add(path: JSONPointer(tokens: ["a", "3"]), value: 4)]))
    }

    @Test func randomStatePairsRoundTrip() throws {
        var random = SplitMix64(seed: 0xB0A4D)
        let reducer = Board()
        for _ in 0..<300 {
            var state = reducer.initialState
            for _ in 0..<Int.random(in: 0..<8, using: &random) {
                let action = Board.randomAction(using: &random, cards: state.cards.count)
                var next = state
                if (try? reducer.reduce(into: &next, action: action)) != nil { state = next }
            }
            var other = state
            for _ in 0..<Int.random(in: 1..<4, using: &random) {
                let action = Board.randomAction(using: &random, cards: other.cards.count)
                var next = other
                if (try? reducer.reduce(into: &next, action: action)) != nil { other = next }
            }
            _ = try changes(state, other)
        }
    }
}
