import Foundation
import LockstepJSON
import Testing

/// The in-place path (`applyRecording`) against the diff path (apply to a copy, then diff the two documents).
@Suite struct AppliedPatchTests {
    static let seeds: [UInt64] = [1, 2, 3, 42, 0xDEAD_BEEF]

    /// The documents of the fuzz corpus that parse (protocol messages, deep nesting).
    static func corpus() throws -> [JSON] {
        let directory = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Fuzz/corpus")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return names.compactMap { name in
            let data = FileManager.default.contents(atPath: directory.appending(path: name).path)
            return data.flatMap { try? JSON(parsing: [UInt8]($0)) }
        }
    }

    /// Checks one patch both ways on `original`; returns whether it applied.
    @discardableResult
    static func check(_ patch: JSONPatch, on original: JSON, _ comment: Comment) throws -> Bool {
        var document = original
        let applied: AppliedPatch
        do {
            applied = try patch.applyRecording(to: &document)
        } catch {
            #expect(throws: JSONPatchError.self, comment) { _ = try patch.applied(to: original) }
            #expect(document.serialized() == original.serialized(), "a failed patch changes nothing; \(comment)")
            return false
        }
        guard let expected = try? patch.applied(to: original) else {
            Issue.record("the diff path failed where the in-place path did not; \(comment)")
            return true
        }
        #expect(document == expected, comment)
        let diffed = JSONPatch(from: original, to: expected)
        #expect(try applied.forward.applied(to: original) == expected, "the forward patch replays; \(comment)")
        #expect(try diffed.applied(to: original) == expected, comment)
        #expect(!applied.forward.operations.contains { $0.name == "test" }, comment)
        #expect(!applied.forward.operations.contains { $0.path.tokens.last == "-" }, comment)
        if expected == original {
            #expect(applied.forward.isEmpty, "a patch that changes nothing records nothing; \(comment)")
            #expect(document.serialized() == original.serialized(), comment)
        }

        var undone = document
        let redo = try? applied.inverse.apply(to: &undone)
        #expect(undone == original, "the inverse restores the document; \(comment)")
        #expect(try redo.map { try $0.applied(to: undone) } == expected, comment)
        return true
    }

    @Test(arguments: seeds)
    func randomPatchesOnRandomDocumentsAgreeWithTheDiffPath(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for round in 0..<200 {
            let original = random.value()
            let patch = random.patch(for: original, count: random.int(1...6))
            #expect(try Self.check(patch, on: original, "seed \(seed) round \(round): \(patch) on \(original)"))
        }
    }

    @Test func randomPatchesOnTheFuzzCorpusAgreeWithTheDiffPath() throws {
        let documents = try Self.corpus()
        #expect(documents.count > 30)
        var random = RandomJSON(seed: 7)
        for (index, original) in documents.enumerated() {
            for _ in 0..<20 {
                let patch = random.patch(for: original, count: random.int(1...6))
                #expect(try Self.check(patch, on: original, "corpus document \(index): \(patch)"))
            }
        }
    }

    @Test(arguments: SuiteRecord.all().filter(\.isEnabled))
    func communitySuiteRecordsAgreeWithTheDiffPath(_ record: SuiteRecord) throws {
        let document = try #require(record.json["doc"])
        guard let patch = try? JSONPatch(json: try #require(record.json["patch"])) else { return }
        let applied = try Self.check(patch, on: document, "\(record)")
        #expect(applied == (record.json["expected"] != nil), "\(record)")
    }

    @Test(arguments: seeds)
    func aFailingOperationInTheMiddleLeavesTheDocumentUnchanged(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<200 {
            let original = random.value()
            var operations = random.patch(for: original, count: random.int(1...5)).operations
            let failing: PatchOperation = switch random.int(0...3) {
            case 0: .test(path: .root, value: .string("never a random document"))
            case 1: .remove(path: JSONPointer(tokens: ["no such member \(seed)"]))
            case 2: .replace(path: JSONPointer(tokens: ["no such member", "x"]), value: 1)
            default: .move(from: .root, path: JSONPointer(tokens: ["inside"]))
            }
            operations.insert(failing, at: random.int(0...operations.count))
            operations.append(.add(path: JSONPointer(tokens: ["after"]), value: 1))
            #expect(try !Self.check(JSONPatch(operations), on: original, "seed \(seed): \(operations)"))
        }
    }

    @Test func forwardIsNormalised() throws {
        var document: JSON = ["list": [1, 2], "a": 1, "b": ["c": 1]]
        let applied = try JSONPatch([
            .add(path: JSONPointer(tokens: ["list", "-"]), value: 3),
            .add(path: JSONPointer(tokens: ["a"]), value: 2),
            .test(path: JSONPointer(tokens: ["a"]), value: 2),
            .replace(path: JSONPointer(tokens: ["b"]), value: ["c": 1.0]),
            .move(from: JSONPointer(tokens: ["a"]), path: JSONPointer(tokens: ["a"])),
            .copy(from: JSONPointer(tokens: ["a"]), path: JSONPointer(tokens: ["list", "-"])),
            .move(from: JSONPointer(tokens: ["list", "0"]), path: JSONPointer(tokens: ["list", "-"])),
        ]).applyRecording(to: &document)
        #expect(applied.forward.operations == [
            .add(path: JSONPointer(tokens: ["list", "2"]), value: 3),
            .replace(path: JSONPointer(tokens: ["a"]), value: 2),
            .add(path: JSONPointer(tokens: ["list", "3"]), value: 2),
            .move(from: JSONPointer(tokens: ["list", "0"]), path: JSONPointer(tokens: ["list", "3"])),
        ])
        #expect(
            document.serialized() == Array(#"{"list":[2,3,2,1],"a":2,"b":{"c":1}}"#.utf8),
            "an equal value keeps its spelling")
    }

    @Test func aPatchThatChangesNothingRecordsNothing() throws {
        let original: JSON = ["a": 1, "b": [true], "c": ["d": [1, 1]]]
        let patches: [[PatchOperation]] = [
            [
                .test(path: JSONPointer(tokens: ["a"]), value: 1.0),
                .replace(path: JSONPointer(tokens: ["a"]), value: 1),
                .add(path: JSONPointer(tokens: ["b"]), value: [true]),
            ],
            [.add(path: JSONPointer(tokens: ["x"]), value: 1), .remove(path: JSONPointer(tokens: ["x"]))],
            [.remove(path: JSONPointer(tokens: ["a"])), .add(path: JSONPointer(tokens: ["a"]), value: 1)],
            [
                .add(path: JSONPointer(tokens: ["c", "d", "0"]), value: 1),
                .remove(path: JSONPointer(tokens: ["c", "d", "2"])),
            ],
        ]
        for operations in patches {
            var document = original
            let applied = try JSONPatch(operations).applyRecording(to: &document)
            #expect(applied.forward.isEmpty, "\(operations)")
            #expect(applied.inverse.isEmpty)
            #expect(document.serialized() == original.serialized(), "member order and spelling are kept")
        }
    }
}

extension AppliedPatchTests {
    /// A move of an element up into its own array, onto the path of an ancestor: undoing it as one `move`
    /// would move a value into itself, which used to stop the server in the rollback of a failed patch.
    @Test func aMoveUpIntoAnAncestorsPathUndoesAndRollsBack() throws {
        let original: JSON = ["list": [["from": "x"], 2]]
        let move = PatchOperation.move(
            from: JSONPointer(tokens: ["list", "0", "from"]), path: JSONPointer(tokens: ["list", "0"]))
        var document = original
        let applied = try JSONPatch([move]).applyRecording(to: &document)
        #expect(document == ["list": ["x", [:], 2]])
        #expect(try applied.inverse.applied(to: document) == original)

        var failing = original
        #expect(throws: JSONPatchError.self) {
            try JSONPatch([move, .test(path: .root, value: 0)]).apply(to: &failing)
        }
        #expect(failing.serialized() == original.serialized())
    }
}
