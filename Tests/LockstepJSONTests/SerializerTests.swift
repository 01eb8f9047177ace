import LockstepJSON
import Testing

@Suite struct SerializerTests {
    private func text(_ value: JSON) -> String { String(decoding: value.serialized(), as: UTF8.self) }

    @Test func writesCompactTextInMemberOrder() {
        let value: JSON = ["b": [1, true, nil], "a": ["x": "y"], "c": [:], "d": []]
        #expect(text(value) == #"{"b":[1,true,null],"a":{"x":"y"},"c":{},"d":[]}"#)
        #expect(value.description == text(value))
    }

    @Test func escapesQuotesBackslashesAndControlCharactersOnly() {
        let value = JSON.string("q\"b\\s/n\nr\rt\tb\u{08}f\u{0C}z\u{0}e\u{1F}é😀\u{7F}")
        #expect(text(value) == #""q\"b\\s/n\nr\rt\tb\bf\fz\u0000e\u001fé😀"# + "\u{7F}\"")
    }

    @Test func writesIntegersExactly() {
        #expect(
            text([0, 7, -7, 10, 1234567890, .int(Int.max), .int(Int.min)])
                == "[0,7,-7,10,1234567890,9223372036854775807,-9223372036854775808]")
    }

    @Test func writesDoublesInShortestRoundTripForm() throws {
        let doubles: [Double] = [
            0.1, 1.0, -2.5, 1e-5, 1e21, .leastNonzeroMagnitude, 1.7976931348623157e308, 123456.789, -0.0,
        ]
        for double in doubles {
            let bytes = JSON.double(double).serialized()
            let reparsed = try JSON(parsing: bytes)
            #expect(reparsed.doubleValue == double, "\(double)")
        }
        #expect(text(0.1) == "0.1")
        #expect(text(1.0) == "1.0")
        #expect(text(1e-5) == "1e-05")
    }

    @Test func writesNonFiniteDoublesAsNull() {
        #expect(text([.double(.nan), .double(.infinity), .double(-.infinity)]) == "[null,null,null]")
    }

    @Test func appendsIntoAnExistingBuffer() {
        var buffer = Array("prefix:".utf8)
        JSON.array([1, "a"]).serialize(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"prefix:[1,"a"]"#)
    }

    @Test func prettyPrintsWithTwoSpaces() {
        let value: JSON = ["a": [1, 2], "b": [:], "c": ["d": nil]]
        let expected = """
            {
              "a": [
                1,
                2
              ],
              "b": {},
              "c": {
                "d": null
              }
            }
            """
        #expect(value.serialized(prettyPrinted: true) == expected)
        #expect(value.serialized(prettyPrinted: false) == #"{"a":[1,2],"b":{},"c":{"d":null}}"#)
    }

    @Test func growsPastItsInitialBufferWithoutLosingBytes() throws {
        let long = String(repeating: "ab\"c\u{1}é", count: 3_000)
        let small: JSON = ["k": .string(long)]
        let bytes = small.serialized()
        #expect(try JSON(parsing: bytes) == small)
        var prefixed = Array("x".utf8)
        small.serialize(into: &prefixed)
        #expect(Array(prefixed.dropFirst()) == bytes)
        let large = JSON.array(
            (0..<20_000).map { .object(["id": .int($0), "s": .string(String(long.prefix($0 % 50)))]) })
        #expect(try JSON(parsing: large.serialized()) == large)
        #expect(try JSON(parsing: large.serialized(prettyPrinted: true)) == large)
    }
}
