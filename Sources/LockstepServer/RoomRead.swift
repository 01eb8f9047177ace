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
    /// What the reader sees: the part `path` names, without what its token may not see; nil for everything.
    var view: RoomView?

    init?(_ request: HTTPRequest) {
        isLog = request.path.hasSuffix("/log")
        guard let name = RoomName(path: isLog ? String(request.path.dropLast("/log".count)) : request.path) else {
            return nil
        }
        room = name.value
        version = request.query[isLog ? "after" : "version"]
        path = isLog ? nil : request.query["path"]
    }

    /// The answer's body: the room, its version and `state` as the reader's view has it (with `path`, if given).
    func body(room name: String, version: Int, state: JSON, epoch: String?, parts: PrivateParts) -> JSON {
        var body: JSONObject = ["room": .string(name), "version": .int(version)]
        if let path { body["path"] = .string(path) }
        body["state"] = view.map { $0.value(in: state, parts: parts) } ?? state
        if let epoch { body["epoch"] = .string(epoch) }
        return .object(body)
    }

    /// The state as it is now, not a past version or a recording.
    var isCurrentState: Bool { !isLog && version == nil }
}
