public import LockstepJSON

/// A message from the server, as the protocol defines it.
///
/// The server encodes each once (a patch goes to every client as the same bytes); clients decode
/// them with ``init(json:)``.
public enum ServerMessage: Sendable, Equatable {
    /// The room's state at `version` as the client may see it, and the connection's id `you`: the first message on a
    /// connection, and again when the client must resynchronise. `undo` and `redo` are global undo's counts.
    case snapshot(room: String, you: String, version: Int, state: JSON, undo: Int, redo: Int)
    /// The connection resumed at `version`: the patches after it follow, and no snapshot.
    case resume(room: String, you: String, version: Int)
    /// One change, to every client of the room: `ops` take the state of `version - 1` to that of `version`; `cause`
    /// says what made it, `undo` and `redo` how many steps global undo and redo can take now.
    case patch(version: Int, ops: JSONPatch, cause: Cause, undo: Int, redo: Int)
    /// To the sender: its request `id` was applied (or changed nothing) and the room is at `version`.
    case ack(id: String?, version: Int)
    /// To the sender: its request `id` was not applied; `code` is one of the protocol's codes, `message` for people.
    case error(id: String?, code: String, message: String)
    /// The clients now in the room, in join order, each with its presence state once it has one: on every join and
    /// leave.
    case presence([Peer])
    /// Only presence states changed: the peers whose state did, each whole, with its latest state (nil: cleared).
    case presenceChanged([Peer])
    /// The answer to a `history` request: the latest changes, newest last.
    case history(id: String?, entries: [HistoryRecord])
    /// To the sender: its action is scheduled as timer `timer`, due at `due` (milliseconds since the Unix epoch); nil
    /// `due` answers a `cancel`.
    case scheduled(id: String?, timer: String, due: Int?)

    /// One line of a `history` answer.
    public struct HistoryRecord: Sendable, Equatable {
        /// The version the change produced.
        public var version: Int
        /// The change's `cause`, the same as in its patch.
        public var cause: Cause

        /// An entry for the change at `version`.
        public init(version: Int, cause: Cause) {
            self.version = version
            self.cause = cause
        }
    }

    /// The message as the server sends it.
    public var json: JSON {
        switch self {
        case .snapshot(let room, let you, let version, let state, let undo, let redo):
            return [
                "type": "snapshot", "room": .string(room), "you": .string(you), "version": .int(version),
                "state": state, "undo": .int(undo), "redo": .int(redo),
            ]
        case .resume(let room, let you, let version):
            return ["type": "resume", "room": .string(room), "you": .string(you), "version": .int(version)]
        case .patch(let version, let ops, let cause, let undo, let redo):
            return [
                "type": "patch", "version": .int(version), "ops": ops.json, "cause": cause.json,
                "undo": .int(undo), "redo": .int(redo),
            ]
        case .ack(let id, let version):
            return Self.reply("ack", id: id, ["version": .int(version)])
        case .error(let id, let code, let message):
            return Self.reply("error", id: id, ["code": .string(code), "message": .string(message)])
        case .presence(let peers):
            return ["type": "presence", "peers": .array(peers.map(\.json))]
        case .presenceChanged(let peers):
            return ["type": "presence", "changed": .array(peers.map(\.changeJSON))]
        case .history(let id, let entries):
            let list = entries.map { JSON.object(["version": .int($0.version), "cause": $0.cause.json]) }
            return Self.reply("history", id: id, ["entries": .array(list)])
        case .scheduled(let id, let timer, let due):
            return Self.reply("scheduled", id: id, ["timer": .string(timer), "due": due.map(JSON.int) ?? .null])
        }
    }

    /// The message as one text frame's payload.
    public func serialized() -> [UInt8] { json.serialized() }

    /// A reply to a request: `type`, then the request's `id` when it had one, then the rest.
    private static func reply(_ type: String, id: String?, _ members: KeyValuePairs<String, JSON>) -> JSON {
        var object: JSONObject = ["type": .string(type)]
        if let id { object["id"] = .string(id) }
        for (key, value) in members { object[key] = value }
        return .object(object)
    }

    /// Reads a message a server sent; an unknown `type` or a missing field is `bad_message`.
    public init(json: JSON) throws(WireError) {
        let object = try WireError.object(json)
        func string(_ key: String) throws(WireError) -> String {
            guard let value = object[key]?.stringValue else { throw .badMessage("missing string \"\(key)\"") }
            return value
        }
        func int(_ key: String) throws(WireError) -> Int {
            guard let value = object[key]?.intValue else { throw .badMessage("missing integer \"\(key)\"") }
            return value
        }
        let id = object["id"]?.stringValue
        switch try string("type") {
        case "snapshot":
            self = .snapshot(
                room: try string("room"), you: try string("you"), version: try int("version"),
                state: object["state"] ?? .null, undo: try int("undo"), redo: try int("redo")
            )
        case "resume":
            self = .resume(room: try string("room"), you: try string("you"), version: try int("version"))
        case "patch":
            let ops: JSONPatch
            do {
                ops = try JSONPatch(json: object["ops"] ?? .null)
            } catch {
                throw .badMessage("\"ops\" is not a JSON Patch: \(error)")
            }
            self = .patch(
                version: try int("version"), ops: ops, cause: try Cause(json: object["cause"] ?? .null),
                undo: try int("undo"), redo: try int("redo")
            )
        case "ack":
            self = .ack(id: id, version: try int("version"))
        case "error":
            self = .error(id: id, code: try string("code"), message: try string("message"))
        case "presence":
            if case .array(let list)? = object["changed"] {
                self = .presenceChanged(list.compactMap(Peer.init(json:)))
                return
            }
            guard case .array(let list)? = object["peers"] else { throw .badMessage("missing array \"peers\"") }
            self = .presence(list.compactMap(Peer.init(json:)))
        case "history":
            guard case .array(let list)? = object["entries"] else { throw .badMessage("missing array \"entries\"") }
            var entries: [HistoryRecord] = []
            for entry in list {
                guard let version = entry["version"]?.intValue else {
                    throw .badMessage("a history entry has no version")
                }
                entries.append(HistoryRecord(version: version, cause: try Cause(json: entry["cause"] ?? .null)))
            }
            self = .history(id: id, entries: entries)
        case "scheduled":
            self = .scheduled(id: id, timer: try string("timer"), due: object["due"]?.intValue)
        case let other:
            throw .badMessage("unknown message type \"\(other)\"")
        }
    }
}
