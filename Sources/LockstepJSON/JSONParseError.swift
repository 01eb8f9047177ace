/// Why a byte sequence is not a JSON document, and where: enough to point at the broken spot in a message.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a closed set callers can switch over.
    public enum Reason: Sendable, Hashable {
        /// The input ended inside a value (or was empty).
        case unexpectedEndOfInput
        /// A byte that cannot start or continue the value being read.
        case unexpectedByte(UInt8)
        /// A byte sequence that is not well-formed UTF-8 (overlong, surrogate, truncated, > U+10FFFF).
        case invalidUTF8
        /// A raw control character (U+0000 to U+001F) inside a string; it must be escaped.
        case controlCharacterInString(UInt8)
        /// A backslash followed by something other than `" \ / b f n r t u`.
        case invalidEscape(UInt8)
        /// `\u` not followed by four hexadecimal digits.
        case invalidUnicodeEscape
        /// A `\uD800`–`\uDFFF` escape that is not half of a high–low surrogate pair.
        case loneSurrogate(UInt16)
        /// A number with a superfluous leading zero such as `01`.
        case leadingZero
        /// A malformed number such as `1.`, `-`, `.5` or `1e`.
        case invalidNumber
        /// A number whose magnitude does not fit in a `Double` (it would become infinity).
        case numberOutOfRange
        /// A misspelled `true`, `false` or `null` (this also covers `NaN` and `Infinity`).
        case invalidLiteral
        /// Non-whitespace after the complete document.
        case trailingCharacters
        /// Containers nested deeper than the limit given to the parser.
        case depthLimitExceeded(Int)
    }

    /// Zero-based byte offset of the offending byte in the input.
    public var offset: Int
    /// What went wrong at `offset`.
    public var reason: Reason

    /// Pairs a reason with where it happened.
    public init(offset: Int, reason: Reason) {
        self.offset = offset
        self.reason = reason
    }

    /// A sentence for logs and client error frames.
    public var description: String {
        "Invalid JSON at byte \(offset): \(reasonText)"
    }

    private var reasonText: String {
        switch reason {
        case .unexpectedEndOfInput: return "the input ends before the value is complete"
        case .unexpectedByte(let byte): return "unexpected \(Self.show(byte))"
        case .invalidUTF8: return "the bytes are not valid UTF-8"
        case .controlCharacterInString(let byte):
            return "control character \(Self.show(byte)) must be escaped inside a string"
        case .invalidEscape(let byte): return "\\\(Self.show(byte)) is not a JSON escape"
        case .invalidUnicodeEscape: return "\\u must be followed by four hexadecimal digits"
        case .loneSurrogate(let unit):
            let hex = String(unit, radix: 16, uppercase: true)
            return "\\u\(hex) is half of a surrogate pair without its other half"
        case .leadingZero: return "numbers must not have leading zeros"
        case .invalidNumber: return "malformed number"
        case .numberOutOfRange: return "number is too large to represent"
        case .invalidLiteral: return "expected true, false or null"
        case .trailingCharacters: return "unexpected data after the end of the document"
        case .depthLimitExceeded(let limit): return "containers nest deeper than the limit of \(limit)"
        }
    }

    private static func show(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(byte < 0x10 ? "0" : "")\(hex)"
    }
}
