public import LockstepJSON

/// A message from a client: what it may ask of a room.
public enum ClientMessage: Sendable, Equatable {
    case action(id: String?, action: JSON)
    case undo(id: String?)
    case redo(id: String?)
    case history(id: String?, limit: Int?)
    /// Back to the state of version `to`, as one new change.
    case revert(id: String?, to: Int)

    /// Longest `id` a client may send, in characters.
    public static let maxIDLength = 128

    /// The request's `id`, echoed in `ack` and `error`.
    public var id: String? {
        switch self {
        case .action(let id, _), .undo(let id), .redo(let id), .history(let id, _), .revert(let id, _): id
        }
    }

    /// Parses one text frame, with the errors the protocol names.
    public init(parsing bytes: [UInt8], maxDepth: Int = 512) throws(WireError) {
        let json: JSON
        do {
            json = try JSON(parsing: bytes, maxDepth: maxDepth)
        } catch {
            throw .badJSON("\(error)")
        }
        guard case .object = json else { throw .badJSON("a message must be a JSON object") }
        try self.init(json: json)
    }

    /// Reads a message from its JSON object.
    public init(json: JSON) throws(WireError) {
        let object = try WireError.object(json)
        let id = try Self.id(in: object)
        guard let type = object["type"] else { throw .badMessage("missing field \"type\"") }
        guard case .string(let name) = type else { throw .badMessage("\"type\" must be a string") }
        switch name {
        case "action":
            guard let action = object["action"] else { throw .badMessage("missing field \"action\"") }
            self = .action(id: id, action: action)
        case "undo":
            self = .undo(id: id)
        case "redo":
            self = .redo(id: id)
        case "history":
            switch object["limit"] {
            case nil, .null?:
                self = .history(id: id, limit: nil)
            case .int(let limit)? where limit >= 0:
                self = .history(id: id, limit: limit)
            default:
                throw .badMessage("\"limit\" must be a non-negative integer")
            }
        case "revert":
            guard let to = object["to"] else { throw .badMessage("missing field \"to\"") }
            guard let version = to.intValue, version >= 0 else {
                throw .badMessage("\"to\" must be a version: a non-negative integer")
            }
            self = .revert(id: id, to: version)
        default:
            throw .badMessage("unknown message type \"\(name)\"")
        }
    }

    /// The `id` of a message object, if it is a valid one: lets an error echo it.
    public static func validID(in json: JSON) -> String? {
        guard case .object(let object) = json else { return nil }
        return try? id(in: object)
    }

    private static func id(in object: JSONObject) throws(WireError) -> String? {
        switch object["id"] {
        case nil, .null?:
            return nil
        case .string(let id)?:
            guard id.count <= maxIDLength else { throw .badMessage("\"id\" is longer than \(maxIDLength) characters") }
            return id
        default:
            throw .badMessage("\"id\" must be a string")
        }
    }

    public var json: JSON {
        var object: JSONObject
        switch self {
        case .action(_, let action): object = ["type": "action", "action": action]
        case .undo: object = ["type": "undo"]
        case .redo: object = ["type": "redo"]
        case .history(_, let limit):
            object = ["type": "history"]
            if let limit { object["limit"] = .int(limit) }
        case .revert(_, let to): object = ["type": "revert", "to": .int(to)]
        }
        if let id { object["id"] = .string(id) }
        return .object(object)
    }
}
