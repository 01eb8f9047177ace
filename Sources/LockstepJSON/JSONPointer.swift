/// An RFC 6901 path to one value inside a document, e.g. `/todos/3/title`; patches address values with it.
public struct JSONPointer: Sendable, Hashable {
    /// The unescaped reference tokens, outermost first; empty for the whole document.
    public var tokens: [String]

    /// The whole document (`""`).
    public static let root = JSONPointer(tokens: [])

    /// Wraps unescaped tokens, e.g. `["todos", "3"]`.
    public init(tokens: [String]) { self.tokens = tokens }

    /// Parses pointer text, undoing `~1` (`/`) and `~0` (`~`); any other `~` is an error.
    public init(_ text: String) throws(JSONPointerError) {
        guard !text.isEmpty else {
            tokens = []
            return
        }
        let utf8 = Array(text.utf8)
        guard utf8[0] == UInt8(ascii: "/") else { throw JSONPointerError(text: text, reason: .missingLeadingSlash) }
        var tokens: [String] = []
        var current: [UInt8] = []
        var index = 1
        while index <= utf8.count {
            if index == utf8.count || utf8[index] == UInt8(ascii: "/") {
                tokens.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
                index += 1
                continue
            }
            let byte = utf8[index]
            if byte == UInt8(ascii: "~") {
                guard index + 1 < utf8.count else { throw JSONPointerError(text: text, reason: .invalidEscape) }
                switch utf8[index + 1] {
                case UInt8(ascii: "0"): current.append(UInt8(ascii: "~"))
                case UInt8(ascii: "1"): current.append(UInt8(ascii: "/"))
                default: throw JSONPointerError(text: text, reason: .invalidEscape)
                }
                index += 2
            } else {
                current.append(byte)
                index += 1
            }
        }
        self.tokens = tokens
    }

    /// Whether this is the whole document.
    public var isRoot: Bool { tokens.isEmpty }

    /// A pointer one level deeper, to a member named `token` (or an array position given as text).
    public func appending(_ token: String) -> JSONPointer {
        var copy = self
        copy.tokens.append(token)
        return copy
    }

    /// A pointer one level deeper, to an array element.
    public func appending(index: Int) -> JSONPointer { appending(String(index)) }

    /// The pointer to the containing value, or `nil` for the root.
    public var parent: JSONPointer? {
        guard !tokens.isEmpty else { return nil }
        return JSONPointer(tokens: Array(tokens.dropLast()))
    }

    /// The last token (member name or index text), or `nil` for the root.
    public var last: String? { tokens.last }

    /// Whether `self` lies strictly inside `other`, e.g. `/a/b` inside `/a`; `move` must not go there.
    public func isStrictDescendant(of other: JSONPointer) -> Bool {
        tokens.count > other.tokens.count && tokens.starts(with: other.tokens)
    }

    /// The array index an RFC 6901 token names: decimal digits without leading zeros. `-` is not an index.
    public static func arrayIndex(_ token: String) -> Int? {
        let utf8 = token.utf8
        guard let first = utf8.first, first &- UInt8(ascii: "0") < 10 else { return nil }
        if first == UInt8(ascii: "0") { return utf8.count == 1 ? 0 : nil }
        var value = 0
        for byte in utf8 {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = shifted.addingReportingOverflow(Int(digit))
            guard !o1 && !o2 else { return nil }
            value = next
        }
        return value
    }

    /// Appends the escaped pointer text as a JSON string, without building the text first.
    func serializeAsJSONString(into out: inout ByteSink) {
        out.append(UInt8(ascii: "\""))
        for token in tokens {
            out.append(UInt8(ascii: "/"))
            var token = token
            token.withUTF8 { JSONWriter.writeEscaped($0, escapingPointerToken: true, into: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONPointer: CustomStringConvertible {
    /// The escaped pointer text, e.g. `/a~1b/0`, as it appears in a patch.
    public var description: String {
        var text = ""
        for token in tokens {
            text.append("/")
            for character in token.unicodeScalars {
                switch character {
                case "~": text.append("~0")
                case "/": text.append("~1")
                default: text.unicodeScalars.append(character)
                }
            }
        }
        return text
    }
}
