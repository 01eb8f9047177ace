import LockstepJSON

/// An action type that shows what its actions look like, so a client that sends one of the wrong shape is told every
/// shape that is accepted.
///
/// Give one example of each case; their JSON, with each value replaced by its kind, is what a refusal lists:
///
/// ```swift
/// extension Board.Action: ActionExamples {
///     static let examples: [Self] = [.add(title: ""), .move(card: 0, to: 0), .clear]
/// }
/// // not an action of this app: ... accepted: {"add":{"title":string}}, {"move":{"card":integer,"to":integer}},
/// // {"clear":{}}
/// ```
public protocol ActionExamples: Encodable {
    /// One action of each shape the type accepts.
    static var examples: [Self] { get }
}

extension ActionExamples {
    /// The shapes of ``examples``, as a refusal lists them.
    static var shapes: String {
        examples.compactMap { try? JSON(encoding: $0) }.map(shape(of:)).joined(separator: ", ")
    }

    /// `value` written as JSON with each leaf replaced by its kind: `{"add":{"title":string}}`.
    private static func shape(of value: JSON) -> String {
        switch value {
        case .object(let object):
            let members = Array(object).map { key, member in
                String(decoding: JSON.string(key).serialized(), as: UTF8.self) + ":" + shape(of: member)
            }
            return "{" + members.joined(separator: ",") + "}"
        case .array(let elements): return "[" + (elements.first.map(shape(of:)) ?? "") + "]"
        case .string: return "string"
        case .int: return "integer"
        case .double: return "number"
        case .bool: return "boolean"
        case .null: return "null"
        }
    }
}
