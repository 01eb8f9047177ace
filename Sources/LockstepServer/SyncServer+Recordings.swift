import LockstepCore
import LockstepJSON
import LockstepTransport

/// `GET /rooms/ROOM?version=V` and `GET /rooms/ROOM/log?after=V`: a past state, and a room's history as NDJSON.
extension SyncServer {
    /// The answer to a time-travel read, or nil when `request` is not one (a plain `GET /rooms/ROOM`, or no room
    /// path at all).
    func timeTravelResponse(to request: HTTPRequest) -> HTTPResponse? {
        let isLog = request.path.hasSuffix("/log")
        let roomPath = isLog ? String(request.path.dropLast("/log".count)) : request.path
        guard let name = RoomName(path: roomPath) else { return nil }
        guard isLog || request.query["version"] != nil else { return nil }
        if let refusal = refusal(for: request, room: name.value) { return refusal }
        guard let room = storedRoom(named: name.value) else {
            return HTTPResponse(status: 404, text: "no room named \(name.value)\n")
        }
        let key = isLog ? "after" : "version"
        var version: Int?
        if let text = request.query[key] {
            guard let number = Int(text) else {
                return HTTPResponse(status: 400, text: "\(key) must be a version: a whole number\n")
            }
            version = number
        }
        // The newest version a recording holds is the newest clients have received.
        let newest = isLog ? room.releasedVersion : room.store.version
        let start = version ?? oldestVersion(of: room)
        guard (0...newest).contains(start) else {
            return HTTPResponse(status: 404, text: "room \(room.name) never had version \(start); it is at \(newest)\n")
        }
        let state: JSON
        do {
            state = try self.state(of: room, at: start)
        } catch {
            if case .broken = error { return HTTPResponse(status: 500, text: "\(error.message)\n") }
            return HTTPResponse(status: 404, text: "\(error.message)\n")
        }
        guard isLog else {
            let body: JSON = ["room": .string(room.name), "version": .int(start), "state": state]
            return HTTPResponse(status: 200, contentType: "application/json", body: body.serialized())
        }
        let snapshot: JSON = [
            "type": "snapshot", "room": .string(room.name), "version": .int(start), "state": state,
        ]
        let recording = RecordingStream(room: room, after: start, snapshotLine: snapshot.serialized(), log: log)
        return HTTPResponse(
            status: 200, contentType: "application/x-ndjson", stream: HTTPBodyStream { recording.next() })
    }
}
