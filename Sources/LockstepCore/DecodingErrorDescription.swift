import LockstepJSON

/// A `DecodingError` said in one line a client author can act on.
struct DecodingErrorDescription {
    var text: String

    init(_ error: any Error) {
        guard let error = error as? DecodingError else {
            text = "\(error)"
            return
        }
        switch error {
        case .keyNotFound(let key, let context):
            text = "missing field \"\(key.stringValue)\"\(Self.location(context.codingPath))"
        case .typeMismatch(let type, let context):
            text = "expected \(Self.kind(type))\(Self.location(context.codingPath))"
        case .valueNotFound(let type, let context):
            text = "expected \(Self.kind(type))\(Self.location(context.codingPath)), found null"
        case .dataCorrupted(let context):
            text = context.debugDescription + Self.location(context.codingPath)
        @unknown default:
            text = "\(error)"
        }
    }

    static func location(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return "" }
        let pointer = path.map { key in key.intValue.map(String.init) ?? key.stringValue }.joined(separator: "/")
        return " at /\(pointer)"
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is JSONObject.Type: "an object"
        case is [JSON].Type: "an array"
        default: "\(type)"
        }
    }
}
