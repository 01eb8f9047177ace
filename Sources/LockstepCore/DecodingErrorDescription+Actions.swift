import LockstepJSON

extension DecodingErrorDescription {
    /// Why `action` is not an `Action` of the app, for a client author: the decoding path and the field it expected,
    /// and, where Swift's synthesized `Codable` for an enum found no case it knows, the shape such actions take and
    /// the members it found instead.
    init(action: JSON, type: Any.Type, error: any Error) {
        self.init(error)
        let name = String(describing: type)
        guard case .typeMismatch(_, let context) = error as? DecodingError,
            context.debugDescription.hasPrefix("Invalid number of keys found")
        else { return }
        let shape =
            "an action is an object with exactly one member, named after one of the cases of \(name), "
            + #"holding that case's fields: {"CASE":{"FIELD":VALUE}}"#
        let pointer = JSONPointer(tokens: context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue })
        let value = action.value(at: pointer)
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
        text = "\(shape); \(found)\(Self.location(context.codingPath))"
    }
}
