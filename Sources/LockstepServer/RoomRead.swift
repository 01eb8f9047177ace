import LockstepTransport

/// An HTTP read of a room: `GET /rooms/ROOM`, a past state (`?version=V`) or its recording (`/log?after=V`).
struct RoomRead {
    let room: String
    /// `/log`: the room's history as NDJSON.
    let isLog: Bool
    /// `version=` of a past state, `after=` of a recording, as given.
    let version: String?

    init?(_ request: HTTPRequest) {
        isLog = request.path.hasSuffix("/log")
        guard let name = RoomName(path: isLog ? String(request.path.dropLast("/log".count)) : request.path) else {
            return nil
        }
        room = name.value
        version = request.query[isLog ? "after" : "version"]
    }

    /// The state as it is now, not a past version or a recording.
    var isCurrentState: Bool { !isLog && version == nil }
}
