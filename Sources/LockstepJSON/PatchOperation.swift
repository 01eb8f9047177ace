import OrderedCollections

/// One RFC 6902 operation; the unit of every state change the server broadcasts.
public enum PatchOperation: Sendable, Hashable {
    /// Inserts into an array (`-` appends), or sets an object member, replacing an existing one.
    case add(path: JSONPointer, value: JSON)
    /// Removes an existing member or element.
    case remove(path: JSONPointer)
    /// Replaces an existing value; the target must exist.
    case replace(path: JSONPointer, value: JSON)
    /// Removes the value at `from` and adds it at `path`, which must not lie inside `from`.
    case move(from: JSONPointer, path: JSONPointer)
    /// Adds a copy of the value at `from` at `path`.
    case copy(from: JSONPointer, path: JSONPointer)
    /// Fails the whole patch unless the value at `path` equals `value` (JSON equality).
    case test(path: JSONPointer, value: JSON)

    /// The `op` member's value, used in JSON and error messages.
    public var name: String {
        switch self {
        case .add: "add"
        case .remove: "remove"
        case .replace: "replace"
        case .move: "move"
        case .copy: "copy"
        case .test: "test"
        }
    }

    /// The `path` member: the location this operation changes or checks.
    public var path: JSONPointer {
        switch self {
        case .add(let path, _), .remove(let path), .replace(let path, _), .move(_, let path),
            .copy(_, let path), .test(let path, _):
            path
        }
    }

    /// Every location the operation reads or writes: its `path`, and the `from` of a `move` or `copy`.
    public var places: [JSONPointer] {
        switch self {
        case .move(let from, let path), .copy(let from, let path): [path, from]
        default: [path]
        }
    }

    /// Reads an operation object as received from a client; unknown extra members are ignored per RFC 6902.
    public init(json: JSON) throws(JSONPatchError) {
        guard case .object(let object) = json else { throw JSONPatchError(reason: .operationNotAnObject) }
        guard let opMember = object.members["op"] else { throw JSONPatchError(reason: .missingMember("op")) }
        guard case .string(let op) = opMember else { throw JSONPatchError(reason: .memberNotAString("op")) }

        func pointer(_ member: String) throws(JSONPatchError) -> JSONPointer {
            guard let value = object.members[member] else {
                throw JSONPatchError(operationName: op, reason: .missingMember(member))
            }
            guard case .string(let text) = value else {
                throw JSONPatchError(operationName: op, reason: .memberNotAString(member))
            }
            do {
                return try JSONPointer(text)
            } catch {
                throw JSONPatchError(operationName: op, reason: .invalidPointer(member: member, error))
            }
        }
        func value(at path: JSONPointer) throws(JSONPatchError) -> JSON {
            guard let value = object.members["value"] else {
                throw JSONPatchError(operationName: op, path: path, reason: .missingMember("value"))
            }
            return value
        }

        switch op {
        case "add":
            let path = try pointer("path")
            self = .add(path: path, value: try value(at: path))
        case "remove":
            self = .remove(path: try pointer("path"))
        case "replace":
            let path = try pointer("path")
            self = .replace(path: path, value: try value(at: path))
        case "move":
            let path = try pointer("path")
            self = .move(from: try pointer("from"), path: path)
        case "copy":
            let path = try pointer("path")
            self = .copy(from: try pointer("from"), path: path)
        case "test":
            let path = try pointer("path")
            self = .test(path: path, value: try value(at: path))
        default:
            throw JSONPatchError(operationName: op, reason: .unknownOperation(op))
        }
    }

    /// The operation as an RFC 6902 JSON object (`op`, then `from`, `path`, `value`).
    public var json: JSON {
        var members = OrderedDictionary<String, JSON>(minimumCapacity: 3)
        members["op"] = .string(name)
        switch self {
        case .add(let path, let value), .replace(let path, let value), .test(let path, let value):
            members["path"] = .string(path.description)
            members["value"] = value
        case .remove(let path):
            members["path"] = .string(path.description)
        case .move(let from, let path), .copy(let from, let path):
            members["from"] = .string(from.description)
            members["path"] = .string(path.description)
        }
        return .object(JSONObject(members))
    }

    /// Appends the same text as `json.serialized()` without building the intermediate value.
    public func serialize(into buffer: inout [UInt8]) {
        ByteSink.append(to: &buffer, estimatedSize: 64) { write(into: &$0) }
    }

    func write(into out: inout ByteSink) {
        out.append("{\"op\":\"")
        switch self {
        case .add: out.append("add")
        case .remove: out.append("remove")
        case .replace: out.append("replace")
        case .move: out.append("move")
        case .copy: out.append("copy")
        case .test: out.append("test")
        }
        out.append(UInt8(ascii: "\""))
        switch self {
        case .add(let path, let value), .replace(let path, let value), .test(let path, let value):
            out.append(",\"path\":")
            path.serializeAsJSONString(into: &out)
            out.append(",\"value\":")
            JSONWriter.write(value, into: &out)
        case .remove(let path):
            out.append(",\"path\":")
            path.serializeAsJSONString(into: &out)
        case .move(let from, let path), .copy(let from, let path):
            out.append(",\"from\":")
            from.serializeAsJSONString(into: &out)
            out.append(",\"path\":")
            path.serializeAsJSONString(into: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}
