import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// `GET /rooms/ROOM?version=V` and `GET /rooms/ROOM/log?after=V`: a past state, and a room's history as NDJSON
/// (followed by its later changes with `follow=true`: see `SyncServer+Follow.swift`).
extension SyncServer {
    /// The answer to a time-travel read, or nil when `read` is of the current state.
    func timeTravelResponse(to read: RoomRead, in room: Room) async -> HTTPResponse? {
        guard !read.isCurrentState else { return nil }
        guard let follows = read.follows else {
            return HTTPResponse(status: 400, text: "follow must be true or false\n")
        }
        let key = read.versionSource
        var version: Int?
        if let text = read.version {
            guard let number = Int(text) else {
                return HTTPResponse(status: 400, text: "\(key) must be a version: a whole number\n")
            }
            version = number
        }
        // The newest version a read shows is the newest clients have received: stored.
        let newest = room.releasedVersion
        var start: Int
        if let version {
            start = version
        } else {
            start = await oldestVersion(of: room)
        }
        guard (0...newest).contains(start) else {
            return HTTPResponse(status: 404, text: "room \(room.name) never had version \(start); it is at \(newest)\n")
        }
        let state: JSON
        do {
            state = try await pastState(of: room, at: start)
        } catch {
            if case .broken = error { return HTTPResponse(status: 500, text: "\(error.message)\n") }
            return HTTPResponse(status: 404, text: "\(error.message)\n")
        }
        guard read.isLog else {
            let body = read.body(room: room.name, version: start, state: state, epoch: nil, parts: privateParts)
            return HTTPResponse(status: 200, contentType: "application/json", body: body.serialized())
        }
        let snapshot: JSON = [
            "type": "snapshot", "room": .string(room.name), "version": .int(start),
            "state": read.sight.value(in: state, parts: privateParts),
            "epoch": .string(room.epoch), "stateVersion": .int(configuration.app.evolution.version),
        ]
        let name = room.name
        let recording = RecordingStream(
            room: room, after: start, snapshotLine: snapshot.serialized(), format: read.format
        ) { after, through, limit, deliver in
            Task {
                deliver(
                    try? await self.pipeline.storedChanges(
                        room: name, after: after, through: through, limit: limit, server: self))
            }
        }
        recording.lines = read.sight.lines(from: state, parts: privateParts)
        if follows {
            // A HEAD has no body to follow: the transport writes the head alone.
            guard !read.isHead else { return HTTPResponse(status: 200, contentType: read.format.contentType) }
            return follow(room, after: recording, format: read.format)
        }
        let body = HTTPBodyStream { recording.next() }
        recording.body = body
        return HTTPResponse(status: 200, contentType: "application/x-ndjson", stream: body)
    }
}
