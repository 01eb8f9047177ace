import LockstepCore
import LockstepJSON
import LockstepTransport

/// An HTTP read of a room: `GET /rooms/ROOM`, a past state (`?version=V`) or its recording (`/log?after=V`).
struct RoomRead {
    let room: String
    /// `/log`: the room's history as NDJSON.
    let isLog: Bool
    /// `version=` of a past state, `after=` of a recording, as given.
    let version: String?
    /// `path=`: the part of the state to answer with, as given.
    let path: String?

    init?(_ request: HTTPRequest) {
        isLog = request.path.hasSuffix("/log")
        guard let name = RoomName(path: isLog ? String(request.path.dropLast("/log".count)) : request.path) else {
            return nil
        }
        room = name.value
        version = request.query[isLog ? "after" : "version"]
        path = isLog ? nil : request.query["path"]
    }

    /// The answer's body: the room, its version and `state` (only what `path` points at, with `path`).
    func body(room name: String, version: Int, state: JSON, epoch: String?) -> JSON {
        var body: JSONObject = ["room": .string(name), "version": .int(version)]
        if let path, let pointer = try? JSONPointer(path) {
            body["path"] = .string(path)
            body["state"] = PathView(path: pointer).value(in: state)
        } else {
            body["state"] = state
        }
        if let epoch { body["epoch"] = .string(epoch) }
        return .object(body)
    }

    /// The state as it is now, not a past version or a recording.
    var isCurrentState: Bool { !isLog && version == nil }
}
