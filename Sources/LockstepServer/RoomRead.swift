import LockstepCore
import LockstepJSON
import LockstepTransport

/// An HTTP read of a room: `GET /rooms/ROOM`, a past state (`?version=V`), its recording (`/log?after=V`) or its
/// recording followed by every later change (`/log?after=V&follow=true`).
struct RoomRead {
    let room: String
    /// `/log`: the room's history as NDJSON.
    let isLog: Bool
    /// `version=` of a past state, `after=` of a recording, as given; for a follower, its `Last-Event-ID` header
    /// instead when it sends one.
    let version: String?
    /// Where ``version`` comes from, for errors: `version`, `after` or `Last-Event-ID`.
    let versionSource: String
    /// `follow=` of a recording, as given.
    let follow: String?
    /// The request's `Accept` names `text/event-stream`.
    let acceptsEvents: Bool
    /// A `HEAD` request: its answer has no body.
    let isHead: Bool
    /// `path=`: the part of the state to answer with, as given.
    let path: String?
    /// What the reader sees: the part `path` names, without what its token may not see.
    var sight: any RoomSight = WholeRoom()

    init?(_ request: HTTPRequest) {
        isLog = request.path.hasSuffix("/log")
        guard let name = RoomName(path: isLog ? String(request.path.dropLast("/log".count)) : request.path) else {
            return nil
        }
        room = name.value
        isHead = request.method == "HEAD"
        follow = isLog ? request.query["follow"] : nil
        acceptsEvents = request.header("accept")?.lowercased().contains("text/event-stream") ?? false
        // A follower reconnecting resumes after the last event it got: the header wins over `after=`.
        let lastEvent = request.header("last-event-id").map { String($0.filter { $0 != " " }) } ?? ""
        if isLog, Self.follows(follow) == true, !lastEvent.isEmpty {
            version = lastEvent
            versionSource = "Last-Event-ID"
        } else {
            versionSource = isLog ? "after" : "version"
            version = request.query[versionSource]
        }
        path = isLog ? nil : request.query["path"]
    }

    /// Whether the recording is followed: `follow=true` (or a bare `follow`), not with `false` or none; nil for any
    /// other value.
    var follows: Bool? { Self.follows(follow) }

    private static func follows(_ value: String?) -> Bool? {
        switch value?.lowercased() {
        case nil, "false": false
        case "true", "": true
        default: nil
        }
    }

    /// How the recording's lines are sent: as server-sent events to a follower that accepts them, else NDJSON.
    var format: RecordingFormat { follows == true && acceptsEvents ? .serverSentEvents : .ndjson }

    /// The answer's body: the room, its version and `state` as the reader's view has it (with `path`, if given).
    func body(room name: String, version: Int, state: JSON, epoch: String?, parts: PrivateParts) -> JSON {
        var body: JSONObject = ["room": .string(name), "version": .int(version)]
        if let path { body["path"] = .string(path) }
        body["state"] = sight.value(in: state, parts: parts)
        if let epoch { body["epoch"] = .string(epoch) }
        return .object(body)
    }

    /// The state as it is now, not a past version or a recording.
    var isCurrentState: Bool { !isLog && version == nil }
}
