import LockstepJSON
import Testing

@Suite struct PropertyTests {
    static let seeds: [UInt64] = [1, 2, 3, 42, 0xDEAD_BEEF]

    @Test(arguments: seeds)
    func serializeThenParseGivesTheSameValue(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<100 {
            let value = random.value()
            let bytes = value.serialized()
            let reparsed = try JSON(parsing: bytes)
            #expect(reparsed == value, "seed \(seed): \(value)")
            #expect(reparsed.serialized() == bytes, "seed \(seed): serialization is deterministic")
            let pretty = try JSON(parsing: value.serialized(prettyPrinted: true))
            #expect(pretty == value)
        }
    }

    @Test(arguments: seeds)
    func diffOfAMutationTransformsTheOldIntoTheNew(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<100 {
            let old = random.value()
            let new = random.mutate(old)
            let patch = JSONPatch(from: old, to: new)
            #expect(try patch.applied(to: old) == new, "seed \(seed): \(old) -> \(new) via \(patch)")
            if old == new { #expect(patch.isEmpty) }
            let reparsed = try JSONPatch(json: try JSON(parsing: patch.serialized()))
            #expect(reparsed == patch)
        }
    }

    @Test(arguments: seeds)
    func diffOfUnrelatedDocumentsTransformsTheOldIntoTheNew(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<100 {
            let old = random.value()
            let new = random.value()
            let patch = JSONPatch(from: old, to: new)
            #expect(try patch.applied(to: old) == new, "seed \(seed): \(old) -> \(new) via \(patch)")
        }
    }

    @Test(arguments: seeds)
    func diffUnderABasePathPatchesTheSubtree(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<50 {
            let old = random.value()
            let new = random.mutate(old)
            let patch = JSONPatch(from: old, to: new, at: JSONPointer(tokens: ["outer", "in/ner"]))
            let wrappedOld: JSON = ["outer": ["in/ner": old, "other": 1]]
            let wrappedNew: JSON = ["outer": ["in/ner": new, "other": 1]]
            #expect(try patch.applied(to: wrappedOld) == wrappedNew)
        }
    }

    @Test(arguments: seeds)
    func theInverseReturnedByApplyRestoresTheOriginal(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<100 {
            let original = random.value()
            let target = random.mutate(original)
            var document = original
            let inverse = try JSONPatch(from: original, to: target).apply(to: &document)
            #expect(document == target)
            let undone = try inverse.apply(to: &document)
            #expect(document == original, "seed \(seed)")
            #expect(try undone.applied(to: document) == target)
        }
    }

    @Test(arguments: seeds)
    func aPatchWhoseLastOperationFailsLeavesTheDocumentUnchanged(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<100 {
            let original = random.value()
            let target = random.mutate(original)
            var operations = JSONPatch(from: original, to: target).operations
            operations.append(.test(path: .root, value: .string("never equal to a mutated document \(seed)")))
            var document = original
            #expect(throws: JSONPatchError.self) { try JSONPatch(operations).apply(to: &document) }
            #expect(document == original)
            #expect(document.serialized() == original.serialized(), "member order is restored too")
        }
    }

    @Test func aOneElementChangeInALargeArrayIsOneOperation() throws {
        let old = JSON.array((0..<10_000).map { .object(["id": .int($0), "done": false]) })
        guard case .array(var elements) = old else { return }
        elements[5_000] = ["id": 5_000, "done": true]
        var patch = JSONPatch(from: old, to: .array(elements))
        #expect(patch.operations == [.replace(path: JSONPointer(tokens: ["5000", "done"]), value: true)])

        elements.insert("new", at: 7_000)
        patch = JSONPatch(from: old, to: .array(elements))
        #expect(patch.operations.count == 2)

        guard case .array(var removed) = old else { return }
        removed.remove(at: 123)
        patch = JSONPatch(from: old, to: .array(removed))
        #expect(patch.operations == [.remove(path: JSONPointer(tokens: ["123"]))])

        guard case .array(var inserted) = old else { return }
        inserted.insert(7, at: 9_999)
        patch = JSONPatch(from: old, to: .array(inserted))
        #expect(patch.operations == [.add(path: JSONPointer(tokens: ["9999"]), value: 7)])

        guard case .array(var appended) = old else { return }
        appended.append(1)
        patch = JSONPatch(from: old, to: .array(appended))
        #expect(patch.operations == [.add(path: JSONPointer(tokens: ["10000"]), value: 1)])
    }

    @Test func diffOfEqualValuesIsEmpty() {
        let value: JSON = ["a": [1, 2, ["b": nil]], "c": 1.0]
        #expect(JSONPatch(from: value, to: value).isEmpty)
        #expect(JSONPatch(from: value, to: ["c": 1, "a": [1, 2, ["b": nil]]]).isEmpty)
    }

    @Test func diffReplacesChangedKinds() {
        #expect(JSONPatch(from: ["a": [1]], to: ["a": ["x": 1]]).operations
            == [.replace(path: JSONPointer(tokens: ["a"]), value: ["x": 1])])
        #expect(JSONPatch(from: 1, to: "1").operations == [.replace(path: .root, value: "1")])
    }
}
