import LockstepJSON

/// A frame that is not a valid protocol message; the two cases are the protocol's error codes.
public enum WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a JSON object (also binary frames): `bad_json`.
    case badJSON(String)
    /// A JSON object, but not a message: unknown `type`, a missing or ill-typed field: `bad_message`.
    case badMessage(String)

    /// The `error` message's `code`: `bad_json` or `bad_message`.
    public var code: String {
        switch self {
        case .badJSON: "bad_json"
        case .badMessage: "bad_message"
        }
    }

    /// Why the frame was refused, for the `error` message's `message`.
    public var message: String {
        switch self {
        case .badJSON(let reason), .badMessage(let reason): reason
        }
    }

    public var description: String { "\(code): \(message)" }

    static func object(_ json: JSON) throws(WireError) -> JSONObject {
        guard case .object(let object) = json else { throw .badMessage("expected a JSON object") }
        return object
    }
}
