/// Why a string is not an RFC 6901 JSON Pointer.
public struct JSONPointerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the text.
    public enum Reason: Sendable, Hashable {
        /// A non-empty pointer must start with `/`.
        case missingLeadingSlash
        /// `~` must be followed by `0` or `1`.
        case invalidEscape
    }

    /// The text that was rejected.
    public var text: String
    /// What is wrong with it.
    public var reason: Reason

    /// Pairs the rejected text with the reason.
    public init(text: String, reason: Reason) {
        self.text = text
        self.reason = reason
    }

    /// A sentence naming the bad pointer and how to fix it.
    public var description: String {
        switch reason {
        case .missingLeadingSlash:
            return "Invalid JSON Pointer \"\(text)\": it must be empty or start with \"/\""
        case .invalidEscape:
            return "Invalid JSON Pointer \"\(text)\": \"~\" must be written \"~0\" and \"/\" inside a name \"~1\""
        }
    }
}
