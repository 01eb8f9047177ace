import LockstepJSON
import Testing

/// Apply must mutate uniquely referenced storage in place: its cost follows the patch, not the document.
@Suite struct InPlaceTests {
    private func arrayAddress(_ value: JSON?) -> UnsafeRawPointer? {
        value?.arrayValue?.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    @Test func applyKeepsTheStorageOfAUniqueDocument() throws {
        var document: JSON = ["items": .array((0..<1_000).map { .object(["id": .int($0), "done": false]) })]
        let patch = JSONPatch([
            .replace(path: JSONPointer(tokens: ["items", "500", "done"]), value: true),
            .add(path: JSONPointer(tokens: ["items", "-"]), value: 1),
            .remove(path: JSONPointer(tokens: ["items", "1000"])),
        ])
        try patch.apply(to: &document)
        let before = arrayAddress(document["items"])
        let inverse = try patch.apply(to: &document)
        #expect(arrayAddress(document["items"]) == before)
        try inverse.apply(to: &document)
        #expect(arrayAddress(document["items"]) == before)
    }

    @Test func failedPatchRollsBackWithoutCopying() throws {
        var document: JSON = ["items": .array((0..<1_000).map { .int($0) })]
        try JSONPatch([.replace(path: JSONPointer(tokens: ["items", "0"]), value: 0)]).apply(to: &document)
        let before = arrayAddress(document["items"])
        let patch = JSONPatch([
            .replace(path: JSONPointer(tokens: ["items", "3"]), value: "x"),
            .test(path: JSONPointer(tokens: ["items", "4"]), value: "not four"),
        ])
        #expect(throws: JSONPatchError.self) { try patch.apply(to: &document) }
        #expect(arrayAddress(document["items"]) == before)
        #expect(document["items"]?[3] == 3)
    }

    @Test func applyDoesNotTouchASharedCopy() throws {
        let original: JSON = ["items": [1, 2, 3]]
        var document = original
        try JSONPatch([.replace(path: JSONPointer(tokens: ["items", "0"]), value: 9)]).apply(to: &document)
        #expect(original == ["items": [1, 2, 3]])
        #expect(document == ["items": [9, 2, 3]])
    }
}
