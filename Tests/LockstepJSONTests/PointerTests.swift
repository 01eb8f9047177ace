import LockstepJSON
import Testing

@Suite struct PointerTests {
    @Test func parsesAndUnescapesTokens() throws {
        #expect(try JSONPointer("").tokens == [])
        #expect(try JSONPointer("/").tokens == [""])
        #expect(try JSONPointer("/a/b").tokens == ["a", "b"])
        #expect(try JSONPointer("/a~1b/m~0n/~01").tokens == ["a/b", "m~n", "~1"])
        #expect(try JSONPointer("//x/").tokens == ["", "x", ""])
        #expect(try JSONPointer("/é/0").tokens == ["é", "0"])
    }

    @Test func rejectsMissingSlashAndBadEscapes() {
        #expect(throws: JSONPointerError(text: "a", reason: .missingLeadingSlash)) { try JSONPointer("a") }
        #expect(throws: JSONPointerError(text: "/a~2", reason: .invalidEscape)) { try JSONPointer("/a~2") }
        #expect(throws: JSONPointerError(text: "/a~", reason: .invalidEscape)) { try JSONPointer("/a~") }
        let error = JSONPointerError(text: "x", reason: .missingLeadingSlash)
        #expect(error.description.contains("start with \"/\""))
    }

    @Test func describesWithEscapesAndRoundTrips() throws {
        let pointer = JSONPointer(tokens: ["a/b", "m~n", "", "0"])
        #expect(pointer.description == "/a~1b/m~0n//0")
        #expect(try JSONPointer(pointer.description) == pointer)
        #expect(JSONPointer.root.description == "")
    }

    @Test func navigatesParentsAndChildren() {
        let pointer = JSONPointer.root.appending("todos").appending(index: 3)
        #expect(pointer.description == "/todos/3")
        #expect(pointer.last == "3")
        #expect(pointer.parent == JSONPointer(tokens: ["todos"]))
        #expect(pointer.parent?.parent == .root)
        #expect(JSONPointer.root.parent == nil)
        #expect(JSONPointer.root.last == nil)
        #expect(JSONPointer.root.isRoot)
        #expect(pointer.isStrictDescendant(of: JSONPointer(tokens: ["todos"])))
        #expect(!pointer.isStrictDescendant(of: pointer))
    }

    @Test func recognisesOnlyRFC6901ArrayIndices() {
        #expect(JSONPointer.arrayIndex("0") == 0)
        #expect(JSONPointer.arrayIndex("42") == 42)
        #expect(JSONPointer.arrayIndex("01") == nil)
        #expect(JSONPointer.arrayIndex("-") == nil)
        #expect(JSONPointer.arrayIndex("-1") == nil)
        #expect(JSONPointer.arrayIndex("1e2") == nil)
        #expect(JSONPointer.arrayIndex("") == nil)
        #expect(JSONPointer.arrayIndex("99999999999999999999999") == nil)
    }
}
