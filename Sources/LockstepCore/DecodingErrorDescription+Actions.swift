import LockstepJSON

extension DecodingErrorDescription {
    /// Why `action` is not an `Action` of the app, for a client author: the decoding path and the field it expected,
    /// and, where Swift's synthesized `Codable` for an enum found no case it knows, the shape such actions take and
    /// the members it found instead; for an action type with ``ActionExamples``, every shape it accepts.
    init(action: JSON, type: Any.Type, error: any Error) {
        self.init(error)
        if case .typeMismatch(_, let context) = error as? DecodingError,
            context.debugDescription.hasPrefix("Invalid number of keys found")
        {
            text = Self.noCase(of: String(describing: type), in: action, at: context.codingPath)
        }
        if let examples = type as? any ActionExamples.Type { text += "; accepted: " + examples.shapes }
    }

    /// Swift's synthesized decoding of an enum found no member naming one of its cases.
    private static func noCase(of name: String, in action: JSON, at path: [any CodingKey]) -> String {
        let shape =
            "an action is an object with exactly one member, named after one of the cases of \(name), "
            + #"holding that case's fields: {"CASE":{"FIELD":VALUE}}"#
        let value = action.value(at: JSONPointer(tokens: path.map { $0.intValue.map(String.init) ?? $0.stringValue }))
        let found: String
        switch value {
        case .object(let object)? where object.isEmpty:
            found = "found an empty object"
        case .object(let object)?:
            let members = object.keys.map { "\"\($0)\"" }.joined(separator: ", ")
            found =
                "found the member\(object.count == 1 ? "" : "s") \(members), "
                + (object.count == 1 ? "which is not a case of \(name)" : "not one case")
        default:
            found = "found \(value.map { "\($0)" } ?? "nothing")"
        }
        return "\(shape); \(found)\(location(path))"
    }
}
