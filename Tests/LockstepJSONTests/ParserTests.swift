import LockstepJSON
import Testing

@Suite struct ParserTests {
    private func parse(_ text: String) throws(JSONParseError) -> JSON { try JSON(parsing: text) }

    private func reason(_ bytes: [UInt8], maxDepth: Int = 512) -> JSONParseError? {
        do {
            _ = try JSON(parsing: bytes, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    private func reason(_ text: String) -> JSONParseError? { reason(Array(text.utf8)) }

    @Test func readsEveryKindOfValue() throws {
        let value = try parse(#" { "a" : [1, -2, 3.5, 1e3, true, false, null, "x"], "b": {} , "c": [] } "#)
        #expect(value == ["a": [1, -2, 3.5, 1000.0, true, false, nil, "x"], "b": [:], "c": []])
    }

    @Test func keepsIntegersExactAndOthersAsDoubles() throws {
        #expect(try parse("9223372036854775807") == .int(Int.max))
        #expect(try parse("-9223372036854775808") == .int(Int.min))
        guard case .double(let big) = try parse("9223372036854775808") else {
            Issue.record("an integer beyond Int.max must become a double")
            return
        }
        #expect(big == 9_223_372_036_854_775_808.0)
        guard case .double = try parse("1.0") else {
            Issue.record("a fraction makes a double even when integral")
            return
        }
        guard case .double = try parse("1e2") else {
            Issue.record("an exponent makes a double")
            return
        }
    }

    @Test func negativeZeroBecomesANegativeDouble() throws {
        guard case .double(let zero) = try parse("-0") else {
            Issue.record("-0 must be a double")
            return
        }
        #expect(zero == 0 && zero.sign == .minus)
        #expect(try parse("0") == .int(0))
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try parse(#""a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\ud83d\ude00""#)
        #expect(value == .string("a\"b\\c/d\u{08}\u{0C}\n\r\tAé😀"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
    }

    @Test func acceptsRawUTF8InStrings() throws {
        #expect(try parse("\"héllo wörld 日本 😀\"") == .string("héllo wörld 日本 😀"))
    }

    @Test func lastDuplicateKeyWins() throws {
        let value = try parse(#"{"a": 1, "b": 2, "a": 3}"#)
        #expect(value == ["a": 3, "b": 2])
        #expect(value.objectValue.map { Array($0.keys) } == ["a", "b"])
    }

    @Test func rejectsMalformedNumbers() {
        #expect(reason("01")?.reason == .leadingZero)
        #expect(reason("-01")?.reason == .leadingZero)
        #expect(reason("1.")?.reason == .unexpectedEndOfInput)
        #expect(reason("1.e5")?.reason == .invalidNumber)
        #expect(reason(".5")?.reason == .unexpectedByte(UInt8(ascii: ".")))
        #expect(reason("-")?.reason == .unexpectedEndOfInput)
        #expect(reason("+1")?.reason == .unexpectedByte(UInt8(ascii: "+")))
        #expect(reason("1e")?.reason == .unexpectedEndOfInput)
        #expect(reason("1e400")?.reason == .numberOutOfRange)
        #expect(reason("NaN")?.reason == .invalidLiteral)
        #expect(reason("Infinity")?.reason == .invalidLiteral)
        #expect(reason("-Infinity")?.reason == .invalidNumber)
    }

    @Test func rejectsBadLiteralsAndStructure() {
        #expect(reason("tru")?.reason == .unexpectedEndOfInput)
        #expect(reason("nul1")?.reason == .invalidLiteral)
        #expect(reason("")?.reason == .unexpectedEndOfInput)
        #expect(reason("   ")?.reason == .unexpectedEndOfInput)
        #expect(reason("[1,]")?.reason == .unexpectedByte(UInt8(ascii: "]")))
        #expect(reason("[1 2]")?.reason == .unexpectedByte(UInt8(ascii: "2")))
        #expect(reason(#"{"a" 1}"#)?.reason == .unexpectedByte(UInt8(ascii: "1")))
        #expect(reason(#"{"a":1,}"#)?.reason == .unexpectedByte(UInt8(ascii: "}")))
        #expect(reason("{1:2}")?.reason == .unexpectedByte(UInt8(ascii: "1")))
        #expect(reason("[1")?.reason == .unexpectedEndOfInput)
    }

    @Test func rejectsTrailingGarbageAtItsOffset() {
        let error = reason("[1] x")
        #expect(error?.reason == .trailingCharacters)
        #expect(error?.offset == 4)
        #expect(reason("1 2")?.reason == .trailingCharacters)
    }

    @Test func rejectsControlCharactersAndBadEscapesInStrings() {
        #expect(reason("\"a\nb\"")?.reason == .controlCharacterInString(0x0A))
        #expect(reason("\"a\tb\"")?.reason == .controlCharacterInString(0x09))
        #expect(reason(#""\x""#)?.reason == .invalidEscape(UInt8(ascii: "x")))
        #expect(reason(#""\u12g4""#)?.reason == .invalidUnicodeEscape)
        #expect(reason(#""unterminated"#)?.reason == .unexpectedEndOfInput)
    }

    @Test func rejectsLoneAndInvalidSurrogateEscapes() {
        #expect(reason(#""\ud800""#)?.reason == .loneSurrogate(0xD800))
        #expect(reason(#""\udc00""#)?.reason == .loneSurrogate(0xDC00))
        #expect(reason(#""\ud800\u0041""#)?.reason == .loneSurrogate(0xD800))
        #expect(reason(#""\ud800x""#)?.reason == .loneSurrogate(0xD800))
    }

    @Test func rejectsInvalidUTF8EverywhereWithItsOffset() {
        let quote = UInt8(ascii: "\"")
        let cases: [[UInt8]] = [
            [quote, 0xC3, quote],  // truncated two-byte sequence
            [quote, 0xC0, 0x80, quote],  // overlong NUL
            [quote, 0xE0, 0x80, 0x80, quote],  // overlong three-byte
            [quote, 0xED, 0xA0, 0x80, quote],  // encoded surrogate
            [quote, 0xF4, 0x90, 0x80, 0x80, quote],  // beyond U+10FFFF
            [quote, 0xFF, quote],
            [quote, 0x80, quote],  // stray continuation byte
            [quote, 0x5C, 0x6E, 0xE2, 0x82, quote],  // after an escape, truncated
        ]
        for bytes in cases {
            let error = reason(bytes)
            #expect(error?.reason == .invalidUTF8, "\(bytes)")
        }
        #expect(reason([quote, 0x61, 0xC3, 0x28, quote])?.offset == 2)
        #expect(reason([0xEF, 0xBB, 0xBF, 0x31])?.reason == .invalidUTF8, "a byte order mark is not JSON")
        #expect(reason([UInt8(ascii: "["), 0xC3, 0xA9, UInt8(ascii: "]")])?.reason == .invalidUTF8)
    }

    @Test func enforcesTheDepthLimitWithoutOverflowingTheStack() {
        let deep = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        let error = reason(deep)
        #expect(error?.reason == .depthLimitExceeded(512))
        #expect(error?.offset == 512)
        let objects = [UInt8](String(repeating: #"{"a":"#, count: 100_000).utf8)
        #expect(reason(objects)?.reason == .depthLimitExceeded(512))
    }

    @Test func acceptsNestingExactlyAtTheLimit() throws {
        let text = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect(reason(Array(text.utf8), maxDepth: 10) == nil)
        #expect(reason(Array(text.utf8), maxDepth: 9)?.reason == .depthLimitExceeded(9))
    }

    @Test func parsesFromEveryInputShape() throws {
        let text = #"{"k":[1,"v"]}"#
        let expected: JSON = ["k": [1, "v"]]
        #expect(try JSON(parsing: text) == expected)
        #expect(try JSON(parsing: Array(text.utf8)) == expected)
        #expect(try JSON(parsing: Array(text.utf8)[...]) == expected)
        #expect(try JSON(parsing: text.utf8) == expected)
        let bytes = Array(text.utf8)
        let fromBuffer = try bytes.withUnsafeBytes { buffer throws(JSONParseError) in try JSON(parsing: buffer) }
        #expect(fromBuffer == expected)
    }

    @Test func errorDescriptionsNameTheOffsetAndProblem() {
        let error = JSONParseError(offset: 7, reason: .leadingZero)
        #expect(error.description == "Invalid JSON at byte 7: numbers must not have leading zeros")
        let depth = JSONParseError(offset: 3, reason: .depthLimitExceeded(2))
        #expect(depth.description.contains("limit of 2"))
    }
}
