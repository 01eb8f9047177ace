/// A JSON document as a value: the state of a room, an action, a patch operand.
///
/// Integers that fit in `Int` stay exact; every other number is a `Double`.
/// Equality follows JSON, not Swift: object member order is ignored and `1 == 1.0`.
///
/// Parsing, serialization, patches and the Codable bridge all live in extensions: see
/// `JSON(parsing:)`, `serialized()`, `JSONPatch` and `JSON(encoding:)`.
public enum JSON: Sendable {
    /// JSON `null`. (`JSON(encoding:)` omits nil optionals rather than writing `null`.)
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int`, kept exact.
    case int(Int)
    /// Any other number. Non-finite values cannot be written as JSON and serialize as `null`.
    case double(Double)
    /// A string of Unicode scalars, compared by code points.
    case string(String)
    /// An ordered list of values.
    case array([JSON])
    /// Named members in insertion order; order is kept for output but ignored by equality.
    case object(JSONObject)
}
