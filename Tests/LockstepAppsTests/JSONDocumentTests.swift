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
}
