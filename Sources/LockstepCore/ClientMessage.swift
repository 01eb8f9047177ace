public import LockstepJSON

/// A message from a client: what it may ask of a room.
public enum ClientMessage: Sendable, Equatable {
    /// Asks the room's app to apply `action` (the wire's `action` message); any JSON the app accepts.
    case action(id: String?, action: JSON)
    /// Takes back the room's latest change (global undo), or with `mine` the sender's own latest change in effect.
    case undo(id: String?, mine: Bool = false)
    /// Re-applies the latest globally undone change, or with `mine` the sender's latest change its own undo took back.
    case redo(id: String?, mine: Bool = false)
    /// Asks for the room's latest `limit` changes and their causes (20 when nil), answered with a `history` message.
    case history(id: String?, limit: Int?)
    /// Back to the state of version `to`, as one new change.
    case revert(id: String?, to: Int)
    /// Says what the client is doing (its presence state: any JSON, `.null` clears it). Not a change: the room's
    /// clients see it in `presence`, and it is never part of the room's state, versions or history.
    case presence(id: String?, state: JSON)
    /// Cancels the room's pending timer `timer` (answered `scheduled` with no `due`, also when none is pending).
    case cancel(id: String?, timer: String)

    /// Longest `id` a client may send, in characters.
    public static let maxIDLength = 128

    /// The request's `id`, echoed in `ack` and `error`.
    public var id: String? {
        switch self {
        case .action(let id, _), .undo(let id, _), .redo(let id, _), .history(let id, _), .revert(let id, _),
            .presence(let id, _), .cancel(let id, _):
            id
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
            self = .undo(id: id, mine: try Self.mine(in: object))
        case "redo":
            self = .redo(id: id, mine: try Self.mine(in: object))
        case "history":
            // A number with an exact integer value (`5`, `5.0`), as `seq` and `to` are read.
            switch object["limit"] {
            case nil, .null?:
                self = .history(id: id, limit: nil)
            case let value? where (value.intValue ?? -1) >= 0:
                self = .history(id: id, limit: value.intValue)
            default:
                throw .badMessage("\"limit\" must be a non-negative integer")
            }
        case "revert":
            guard let to = object["to"] else { throw .badMessage("missing field \"to\"") }
            guard let version = to.intValue, version >= 0 else {
                throw .badMessage("\"to\" must be a version: a non-negative integer")
            }
            self = .revert(id: id, to: version)
        case "presence":
            guard let state = object["state"] else { throw .badMessage("missing field \"state\"") }
            self = .presence(id: id, state: state)
        case "cancel":
            guard let timer = try TimerRequest.name(in: object) else { throw .badMessage("missing field \"timer\"") }
            self = .cancel(id: id, timer: timer)
        default:
            throw .badMessage("unknown message type \"\(name)\"")
        }
    }

    /// The `id` of a message object, if it is a valid one: lets an error echo it.
    public static func validID(in json: JSON) -> String? {
        guard case .object(let object) = json else { return nil }
        return try? id(in: object)
    }

    /// `"mine": true` asks for the sender's own changes; absent, null or false for the room's.
    private static func mine(in object: JSONObject) throws(WireError) -> Bool {
        switch object["mine"] {
        case nil, .null?: return false
        case .bool(let mine)?: return mine
        default: throw .badMessage("\"mine\" must be true or false")
        }
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

    /// The message as the client sends it, `id` included when it has one.
    public var json: JSON {
        var object: JSONObject
        switch self {
        case .action(_, let action): object = ["type": "action", "action": action]
        case .undo(_, let mine):
            object = ["type": "undo"]
            if mine { object["mine"] = true }
        case .redo(_, let mine):
            object = ["type": "redo"]
            if mine { object["mine"] = true }
        case .history(_, let limit):
            object = ["type": "history"]
            if let limit { object["limit"] = .int(limit) }
        case .revert(_, let to): object = ["type": "revert", "to": .int(to)]
        case .presence(_, let state): object = ["type": "presence", "state": state]
        case .cancel(_, let timer): object = ["type": "cancel", "timer": .string(timer)]
        }
        if let id { object["id"] = .string(id) }
        return .object(object)
    }
}
