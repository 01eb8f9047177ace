import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepTesting
import Testing

@MainActor @Suite struct JSONDocumentTests {
    private func patch(_ ops: JSON) throws -> JSONDocument.Action {
        try (["type": "patch", "ops": ops] as JSON).decode(JSONDocument.Action.self)
    }

    @Test func appliesPatches() throws {
        let store = TestStore(JSONDocument())
        store.send(try patch([["op": "add", "path": "/todo", "value": ["a"]]])) { $0 = ["todo": ["a"]] }
        store.send(try patch([["op": "add", "path": "/todo/-", "value": "b"]])) { $0 = ["todo": ["a", "b"]] }
        store.undo { $0 = ["todo": ["a"]] }
    }

    @Test func aFailingOperationRejectsTheWholePatch() throws {
        let store = TestStore(JSONDocument(), state: ["n": 1])
        store.reject(
            try patch([
                ["op": "replace", "path": "/n", "value": 2],
                ["op": "test", "path": "/n", "value": 1],
            ]))
        #expect(store.state == ["n": 1])
    }

    @Test func malformedPatchesAreNotActions() throws {
        var store = Store(reducer: JSONDocument())
        for action: JSON in [
            ["type": "patch"], ["type": "patch", "ops": [["op": "jump", "path": "/"]]], ["type": "merge"], "patch",
        ] {
            #expect(throws: StoreError.self) { try store.send(json: action) }
            do { _ = try store.send(json: action) } catch { #expect(error.code == "invalid_action") }
        }
    }

    /// The rejection `ops` get from `store`, which they leave as it was.
    private func rejection(of ops: [JSON], in store: inout Store<JSONDocument>) -> String? {
        let before = store.state
        do {
            _ = try store.send(json: ["type": "patch", "ops": .array(ops)])
            return nil
        } catch {
            #expect(error.code == "rejected")
            #expect(store.state == before)
            return error.message
        }
    }

    /// Each patch nests within what is below 512 levels, but together they would go past it: the patch that would is
    /// refused, so every state can be written out and parsed again.
    @Test func nothingNestsDeeperThanAMessageMay() throws {
        var store = Store(reducer: JSONDocument())
        var deep: JSON = 1
        for _ in 0..<100 { deep = [deep] }
        var path = "/d"
        var refusal: String?
        for _ in 0..<10 where refusal == nil {
            refusal = rejection(of: [["op": "add", "path": .string(path), "value": deep]], in: &store)
            path += String(repeating: "/0", count: 100)
        }
        #expect(refusal?.contains("deeper than 512") == true)
        let written = store.state.serialized()
        #expect(try JSON(parsing: written, maxDepth: JSONDocument.maxDepth) == store.state)
        // Moving a deep value into a deeper place is refused too; moving it up is not.
        #expect(rejection(of: [["op": "add", "path": "/e", "value": deep]], in: &store) == nil)
        let innermost = "/e" + String(repeating: "/0", count: 99) + "/-"
        let moved = rejection(of: [["op": "move", "from": "/d", "path": .string(innermost)]], in: &store)
        #expect(moved?.contains("deeper than 512") == true)
        #expect(rejection(of: [["op": "move", "from": "/d/0", "path": "/e"]], in: &store) == nil)
    }

    /// A patch of a few kilobytes that copies the document into itself again and again is refused before it doubles
    /// the document a twentieth time.
    @Test func onePatchWritesAtMostItsLimit() throws {
        var store = Store(reducer: JSONDocument(maxChangeBytes: 1 << 20))
        #expect(rejection(of: [["op": "add", "path": "/s", "value": .string(String(repeating: "x", count: 1000))]], in: &store) == nil)
        let copies: [JSON] = (0..<20).map { ["op": "copy", "from": "", "path": .string("/c\($0)")] }
        #expect(rejection(of: copies, in: &store)?.contains("more than 1048576 bytes") == true)
        #expect(store.state.objectValue?.count == 1)
        #expect(rejection(of: Array(copies.prefix(5)), in: &store) == nil)
    }
}
