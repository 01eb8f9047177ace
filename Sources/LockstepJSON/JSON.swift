/// A JSON document as a value: the state of a room, an action, a patch operand.
///
/// Integers that fit in `Int` stay exact; every other number is a `Double`.
/// Equality follows JSON, not Swift: object member order is ignored and `1 == 1.0`.
public enum JSON: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)
}
