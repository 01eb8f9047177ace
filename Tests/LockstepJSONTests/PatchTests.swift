import LockstepJSON
import Testing

@Suite struct PatchTests {
    private func pointer(_ text: String) -> JSONPointer {
        do { return try JSONPointer(text) } catch { fatalError("bad test pointer \(text)") }
    }

    private func failure(_ operations: [PatchOperation], on document: JSON) -> JSONPatchError? {
        var copy = document
        do {
            try JSONPatch(operations).apply(to: &copy)
            return nil
        } catch {
            #expect(copy == document)
            #expect(copy.serialized() == document.serialized())
            return error
        }
    }

    @Test func addsMembersAndElements() throws {
        var document: JSON = ["list": [1, 3]]
        try JSONPatch([
            .add(path: pointer("/list/1"), value: 2),
            .add(path: pointer("/list/-"), value: 4),
            .add(path: pointer("/list/4"), value: 5),
            .add(path: pointer("/name"), value: "n"),
            .add(path: pointer("/list/0"), value: 0),
        ]).apply(to: &document)
        #expect(document == ["list": [0, 1, 2, 3, 4, 5], "name": "n"])
    }

    @Test func addToAnExistingMemberReplacesItInPlace() throws {
        let document: JSON = ["a": 1, "b": 2]
        let result = try JSONPatch([.add(path: pointer("/a"), value: 9)]).applied(to: document)
        #expect(result.serialized() == Array(#"{"a":9,"b":2}"#.utf8))
    }

    @Test func addReportsMissingParentsAndBadIndices() {
        let document: JSON = ["list": [1], "n": 1]
        #expect(failure([.add(path: pointer("/missing/x"), value: 1)], on: document)?.reason
            == .pathNotFound(pointer("/missing")))
        #expect(failure([.add(path: pointer("/list/2"), value: 1)], on: document)?.reason
            == .indexOutOfRange(index: 2, count: 1, at: pointer("/list")))
        #expect(failure([.add(path: pointer("/list/01"), value: 1)], on: document)?.reason
            == .invalidArrayIndex(token: "01", at: pointer("/list")))
        #expect(failure([.add(path: pointer("/n/x"), value: 1)], on: document)?.reason == .notAContainer(pointer("/n")))
    }

    @Test func removeAndReplaceNeedAnExistingTarget() {
        let document: JSON = ["list": [1], "a": nil]
        #expect(failure([.remove(path: pointer("/b"))], on: document)?.reason == .pathNotFound(pointer("/b")))
        #expect(failure([.remove(path: pointer("/list/1"))], on: document)?.reason
            == .indexOutOfRange(index: 1, count: 1, at: pointer("/list")))
        #expect(failure([.remove(path: pointer("/list/-"))], on: document)?.reason == .pathNotFound(pointer("/list/-")))
        #expect(failure([.replace(path: pointer("/b"), value: 1)], on: document)?.reason
            == .pathNotFound(pointer("/b")))
        #expect(failure([.remove(path: .root)], on: document)?.reason == .cannotRemoveRoot)
    }

    @Test func replaceAndRemoveWork() throws {
        let document: JSON = ["a": 1, "b": [1, 2, 3]]
        let result = try JSONPatch([
            .replace(path: pointer("/a"), value: ["x": 1]),
            .remove(path: pointer("/b/1")),
            .replace(path: pointer("/b/0"), value: "first"),
        ]).applied(to: document)
        #expect(result == ["a": ["x": 1], "b": ["first", 3]])
        #expect(try JSONPatch([.replace(path: .root, value: 7)]).applied(to: document) == 7)
    }

    @Test func moveAndCopy() throws {
        let document: JSON = ["a": ["x": 1], "list": [1, 2, 3]]
        let result = try JSONPatch([
            .move(from: pointer("/a/x"), path: pointer("/y")),
            .move(from: pointer("/list/0"), path: pointer("/list/2")),
            .copy(from: pointer("/list"), path: pointer("/copy")),
            .move(from: pointer("/y"), path: pointer("/y")),
        ]).applied(to: document)
        #expect(result == ["a": [:], "list": [2, 3, 1], "y": 1, "copy": [2, 3, 1]])
    }

    @Test func moveIntoItsOwnChildFails() {
        let document: JSON = ["a": ["b": 1]]
        #expect(failure([.move(from: pointer("/a"), path: pointer("/a/b/c"))], on: document)?.reason
            == .moveIntoOwnChild(from: pointer("/a"), path: pointer("/a/b/c")))
        #expect(failure([.move(from: pointer("/nope"), path: pointer("/x"))], on: document)?.reason
            == .pathNotFound(pointer("/nope")))
        #expect(failure([.copy(from: pointer("/nope"), path: pointer("/x"))], on: document)?.reason
            == .pathNotFound(pointer("/nope")))
    }

    @Test func testUsesJSONEquality() throws {
        let document: JSON = ["a": ["x": 1, "y": 2.0], "b": [1]]
        var copy = document
        let inverse = try JSONPatch([
            .test(path: pointer("/a"), value: ["y": 2, "x": 1.0]),
            .test(path: pointer("/b/0"), value: 1),
        ]).apply(to: &copy)
        #expect(inverse.isEmpty)
        #expect(copy == document)
        #expect(failure([.test(path: pointer("/b/0"), value: "1")], on: document)?.reason
            == .testFailed(expected: "1", actual: 1))
    }

    @Test func failureNamesTheOperationAndLeavesTheDocumentExactly() {
        let document: JSON = ["b": 1, "a": 2, "list": [1, 2, 3]]
        let error = failure([
            .remove(path: pointer("/b")),
            .add(path: pointer("/list/0"), value: 0),
            .move(from: pointer("/a"), path: pointer("/c")),
            .replace(path: pointer("/zzz"), value: 1),
        ], on: document)
        #expect(error?.operationIndex == 3)
        #expect(error?.operationName == "replace")
        #expect(error?.path == pointer("/zzz"))
        #expect(error?.description == #"JSON Patch failed at operation 3 (replace "/zzz"): nothing exists at "/zzz""#)
    }

    @Test func applyReturnsTheExactInverse() throws {
        let original: JSON = ["a": 1, "b": [1, 2, 3], "c": ["d": "e"]]
        var document = original
        let inverse = try JSONPatch([
            .add(path: pointer("/b/-"), value: 4),
            .remove(path: pointer("/a")),
            .replace(path: pointer("/c/d"), value: "f"),
            .move(from: pointer("/b/0"), path: pointer("/c/moved")),
            .copy(from: pointer("/c"), path: pointer("/b/1")),
            .add(path: pointer("/c"), value: 5),
            .test(path: pointer("/c"), value: 5),
        ]).apply(to: &document)
        #expect(document != original)
        try inverse.apply(to: &document)
        #expect(document == original)
    }

    @Test func readsAndWritesPatchJSON() throws {
        let json = try JSON(parsing: #"""
            [{"op":"add","path":"/a~1b","value":{"x":[1]}},{"op":"remove","path":"/c"},
             {"op":"replace","path":"","value":null},{"op":"move","from":"/d","path":"/e"},
             {"op":"copy","from":"/f","path":"/g/-"},{"op":"test","path":"/h","value":"\n"}]
            """#)
        let patch = try JSONPatch(json: json)
        #expect(patch.operations.count == 6)
        #expect(patch.operations[0] == .add(path: JSONPointer(tokens: ["a/b"]), value: ["x": [1]]))
        #expect(patch.json == json)
        #expect(try JSON(parsing: patch.serialized()) == json)
        #expect(patch.serialized() == patch.json.serialized())
    }

    @Test func rejectsMalformedOperationsWithTheirIndex() {
        func reason(_ text: String) -> JSONPatchError? {
            do {
                _ = try JSONPatch(json: try JSON(parsing: text))
                return nil
            } catch let error as JSONPatchError {
                return error
            } catch {
                return nil
            }
        }
        #expect(reason(#"{"op":"add"}"#)?.reason == .patchNotAnArray)
        #expect(reason(#"[1]"#)?.reason == .operationNotAnObject)
        #expect(reason(#"[{"path":"/a"}]"#)?.reason == .missingMember("op"))
        #expect(reason(#"[{"op":"add","path":"/a"}]"#)?.reason == .missingMember("value"))
        #expect(reason(#"[{"op":"move","path":"/a"}]"#)?.reason == .missingMember("from"))
        #expect(reason(#"[{"op":"remove","path":1}]"#)?.reason == .memberNotAString("path"))
        #expect(reason(#"[{"op":"frob","path":"/a"}]"#)?.reason == .unknownOperation("frob"))
        #expect(reason(#"[{"op":"remove","path":"a"}]"#)?.reason
            == .invalidPointer(member: "path", JSONPointerError(text: "a", reason: .missingLeadingSlash)))
        let located = reason(#"[{"op":"remove","path":"/a"},{"op":"add","path":"/b"}]"#)
        #expect(located?.operationIndex == 1)
        #expect(located?.operationName == "add")
        #expect(reason(#"[{"op":"add","path":"/a","value":null,"extra":1}]"#) == nil)
    }
}
