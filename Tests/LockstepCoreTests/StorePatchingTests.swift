import LockstepCore
import LockstepJSON
import LockstepTestSupport
import Testing

/// A JSON document changed by patches that records them as applied: the in-place path.
struct PatchDocument: PatchingReducer {
    typealias State = JSON
    typealias Action = JSON

    var initialState: JSON { [] }

    func patch(_ state: inout JSON, with action: JSON) throws(Rejection) -> Reduction<JSON> {
        do {
            return Reduction(try JSONPatch(json: action).applyRecording(to: &state))
        } catch {
            throw Rejection("\(error)")
        }
    }
}

/// The same document left to the store's typed differ: the diff path.
struct DiffDocument: Reducer {
    var initialState: JSON { [] }

    func reduce(into state: inout JSON, action: JSON) throws(Rejection) -> Effect<JSON> {
        do {
            try JSONPatch(json: action).apply(to: &state)
        } catch {
            throw Rejection("\(error)")
        }
        return .none
    }
}

@Suite struct StorePatchingTests {
    /// A random patch on a list of `{"id","n"}` objects: every kind of operation, some that fail.
    static func randomPatch(count: Int, using random: inout SplitMix64) -> JSONPatch {
        func index(allowEnd: Bool = false) -> String {
            let upper = max(0, count - (allowEnd ? 0 : 1))
            guard Int.random(in: 0...100, using: &random) >= 10 else { return "-" }
            return String(Int.random(in: 0...upper, using: &random))
        }
        let value = JSON.object([
            "id": .int(Int.random(in: 0...9, using: &random)), "n": .int(Int.random(in: 0...3, using: &random)),
        ])
        return JSONPatch((0..<Int.random(in: 1...3, using: &random)).map { _ in
            switch Int.random(in: 0...6, using: &random) {
            case 0: .add(path: JSONPointer(tokens: [index(allowEnd: true)]), value: value)
            case 1: .remove(path: JSONPointer(tokens: [index()]))
            case 2: .replace(path: JSONPointer(tokens: [index(), "n"]), value: value["n"]!)
            case 3: .move(from: JSONPointer(tokens: [index()]), path: JSONPointer(tokens: [index(allowEnd: true)]))
            case 4: .copy(from: JSONPointer(tokens: [index(), "id"]), path: JSONPointer(tokens: [index(), "copy"]))
            case 5: .test(path: JSONPointer(tokens: [index(), "n"]), value: value["n"]!)
            default: .replace(path: JSONPointer(tokens: [index()]), value: value)
            }
        })
    }

    @Test(arguments: [UInt64(1), 2, 3, 42])
    func theInPlacePathAgreesWithTheDiffPath(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let start = JSON.array((0..<8).map { .object(["id": .int($0), "n": 0]) })
        var inPlace = Store(reducer: PatchDocument(), state: start)
        var diffed = Store(reducer: DiffDocument(), state: start)
        for round in 0..<300 {
            let before = inPlace.state
            let patch = Self.randomPatch(count: before.arrayValue?.count ?? 0, using: &random)
            let fast = Result { () throws(StoreError) in try inPlace.send(patch.json).change }
            let slow = Result { () throws(StoreError) in try diffed.send(patch.json).change }
            #expect(inPlace.state == diffed.state, "round \(round): \(patch)")
            switch (fast, slow) {
            case (.success(let change?), .success(let reference?)):
                #expect(try change.patch.applied(to: before) == inPlace.state, "round \(round)")
                #expect(try change.inverse.applied(to: inPlace.state) == before, "round \(round)")
                #expect(try reference.patch.applied(to: before) == inPlace.state)
            case (.success(nil), .success(nil)):
                #expect(inPlace.state.serialized() == before.serialized(), "no change changes nothing")
            case (.failure, .failure):
                #expect(inPlace.state.serialized() == before.serialized(), "a rejected patch changes nothing")
            default:
                Issue.record("round \(round): \(patch) gave \(fast) in place and \(slow) by diffing")
            }
            if Int.random(in: 0...4, using: &random) == 0, inPlace.history.undoCount > 0 {
                _ = try inPlace.undo()
                _ = try diffed.undo()
                #expect(inPlace.state == diffed.state, "undo, round \(round)")
                if Bool.random(using: &random) {
                    _ = try inPlace.redo()
                    _ = try diffed.redo()
                    #expect(inPlace.state == diffed.state, "redo, round \(round)")
                }
            }
        }
    }

    @Test func undoAndRedoOfAJSONStateChangeItInPlace() throws {
        let start = JSON.array((0..<1_000).map { .object(["id": .int($0), "n": 0]) })
        var store = Store(reducer: PatchDocument(), state: start)
        let replace = JSONPatch([.replace(path: JSONPointer(tokens: ["500", "n"]), value: 1)])
        _ = try store.send(replace.json)
        let address = store.state.arrayValue?.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        func storage() -> UnsafeRawPointer? {
            store.state.arrayValue?.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        }
        _ = try store.undo()
        #expect(store.state == start)
        #expect(storage() == address, "undo mutates the state's storage, no copy")
        _ = try store.redo()
        #expect(store.state[500]?["n"] == 1)
        #expect(storage() == address, "redo mutates the state's storage, no copy")
        _ = try store.send(JSONPatch([.replace(path: JSONPointer(tokens: ["500", "n"]), value: 2)]).json)
        #expect(storage() == address, "an action mutates the state's storage, no copy")
    }

    @Test func aPatchThatChangesNothingMakesNoVersion() throws {
        var store = Store(reducer: PatchDocument(), state: [["id": 1, "n": 0]])
        let result = try store.send(JSONPatch([
            .test(path: JSONPointer(tokens: ["0", "n"]), value: 0),
            .replace(path: JSONPointer(tokens: ["0", "n"]), value: 0.0),
        ]).json)
        #expect(result.change == nil)
        let cancelling = try store.send(JSONPatch([
            .add(path: JSONPointer(tokens: ["0", "x"]), value: 1), .remove(path: JSONPointer(tokens: ["0", "x"])),
        ]).json)
        #expect(cancelling.change == nil, "operations that cancel out leave the state unchanged")
        #expect(store.version == 0)
        #expect(store.state.serialized() == Array(#"[{"id":1,"n":0}]"#.utf8))
    }

    @Test func aRejectedPatchLeavesTheStateAndTheHistory() throws {
        var store = Store(reducer: PatchDocument(), state: [["id": 1, "n": 0]])
        _ = try store.send(JSONPatch([.add(path: JSONPointer(tokens: ["-"]), value: 2)]).json)
        let before = store.state
        #expect(throws: StoreError.self) {
            try store.send(JSONPatch([
                .remove(path: JSONPointer(tokens: ["0"])),
                .test(path: JSONPointer(tokens: ["0"]), value: 3),
            ]).json)
        }
        #expect(store.state.serialized() == before.serialized())
        #expect(store.version == 1)
        #expect(store.history.undoCount == 1)
    }
}
