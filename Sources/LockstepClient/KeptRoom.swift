import LockstepCore
import LockstepJSON

/// What a ``RoomClient`` keeps of one room between runs: its session, the requests it has not seen answered, and the
/// last confirmed state it mirrored, so a restarted client resumes (`since=`, `seq`) where it stopped.
///
/// The file is one JSON object whose `format` says how to read it. Format 3 is format 2 with a scheduled action in the
/// outbox, its `request` carrying `after` and `timer`: written only then, so an older client, which would send the
/// action at once, sets such a file aside instead. Format 2 is
/// `{"format":2,"app":..,"room":..,"path":..,"session":..,"epoch":..,"synced":..,"version":..,"nextSeq":..,
/// "outbox":[{"id":..,"request":{..},"seq":..,"mirroredAt":..}],"state":..}`, `state` last so it is written from
/// bytes already serialized; a scheduled action's `request` carries its `after` and `timer`. Format 1 had no `nextSeq`, `synced` or `mirroredAt`: the next `seq` follows the
/// highest kept one, the state counts as mirrored when it is not null, and no request counts as in it yet.
struct KeptRoom: Equatable {
    /// The newest format this client writes; it reads this one and every older one.
    static let format = 3

    /// One change request the server had not answered yet.
    struct Request: Equatable {
        let id: String
        let message: ClientMessage
        /// An action's `after` and `timer`, for a scheduled one.
        var timer: TimerRequest?
        /// Its `seq`, once it went out: it must go out again with the same number.
        var seq: Int?
        /// The version whose patch (or snapshot) put its change in the mirror: with a kept state at or after it, it
        /// is no longer predicted.
        var mirroredAt: Int?
    }

    var app: String
    var room: String
    var path: String
    var session: String
    var epoch: String?
    /// True once the state is one the server sent (a client that never reached its server keeps only requests).
    var synced: Bool
    var version: Int
    var nextSeq: Int
    var outbox: [Request]
    var state: JSON

    /// Why a kept file cannot be used.
    enum Unreadable: Error, CustomStringConvertible {
        case notJSON(String)
        case newerFormat(Int)
        case missing(String)

        var description: String {
            switch self {
            case .notJSON(let reason): "not a kept room (\(reason))"
            case .newerFormat(let format):
                "written in format \(format) by a newer client (this one reads formats up to \(KeptRoom.format))"
            case .missing(let field): "not a kept room (no valid \(field))"
            }
        }
    }

    /// Reads a kept file's bytes, of this format or an older one.
    init(bytes: [UInt8]) throws(Unreadable) {
        let json: JSON
        do {
            json = try JSON(parsing: bytes)
        } catch {
            throw .notJSON("\(error)")
        }
        guard let format = json["format"]?.intValue, format >= 1 else { throw .missing("format") }
        guard format <= Self.format else { throw .newerFormat(format) }
        func string(_ key: String) throws(Unreadable) -> String {
            guard let value = json[key]?.stringValue else { throw .missing(key) }
            return value
        }
        app = try string("app")
        room = try string("room")
        path = try string("path")
        session = try string("session")
        epoch = json["epoch"]?.stringValue
        guard let version = json["version"]?.intValue, version >= 0 else { throw .missing("version") }
        self.version = version
        guard let state = json["state"] else { throw .missing("state") }
        self.state = state
        guard let entries = json["outbox"]?.arrayValue else { throw .missing("outbox") }
        outbox = []
        for entry in entries {
            guard let id = entry["id"]?.stringValue, let request = entry["request"],
                let read = try? ClientRequest(json: request)
            else { throw .missing("outbox request") }
            let seq = entry["seq"]?.intValue
            let mirroredAt = format >= 2 ? entry["mirroredAt"]?.intValue : nil
            outbox.append(
                Request(id: id, message: read.message, timer: read.timer, seq: seq, mirroredAt: mirroredAt))
        }
        let highest = outbox.compactMap(\.seq).max() ?? 0
        if format >= 2 {
            guard let synced = json["synced"]?.boolValue else { throw .missing("synced") }
            guard let nextSeq = json["nextSeq"]?.intValue, nextSeq > highest else { throw .missing("nextSeq") }
            self.synced = synced
            self.nextSeq = nextSeq
        } else {
            synced = state != .null
            nextSeq = highest + 1
        }
    }

    init(
        app: String, room: String, path: String, session: String, epoch: String?, synced: Bool, version: Int,
        nextSeq: Int, outbox: [Request], state: JSON
    ) {
        self.app = app
        self.room = room
        self.path = path
        self.session = session
        self.epoch = epoch
        self.synced = synced
        self.version = version
        self.nextSeq = nextSeq
        self.outbox = outbox
        self.state = state
    }

    /// The file's bytes, with `stateBytes` (the serialized `state`, reused while the state has not changed) last.
    func serialized(stateBytes: [UInt8]) -> [UInt8] {
        let entries: [JSON] = outbox.map { request in
            [
                "id": .string(request.id),
                "request": ClientRequest(message: request.message, timer: request.timer).json,
                "seq": request.seq.map(JSON.int) ?? .null, "mirroredAt": request.mirroredAt.map(JSON.int) ?? .null,
            ]
        }
        let format = outbox.contains { $0.timer != nil } ? Self.format : 2
        let header: JSON = [
            "format": .int(format), "app": .string(app), "room": .string(room), "path": .string(path),
            "session": .string(session), "epoch": epoch.map(JSON.string) ?? .null, "synced": .bool(synced),
            "version": .int(version), "nextSeq": .int(nextSeq), "outbox": .array(entries),
        ]
        var bytes = header.serialized()
        // `{...}` becomes `{...,"state":STATE}`.
        bytes.removeLast()
        bytes.append(contentsOf: Array(#","state":"#.utf8))
        bytes.append(contentsOf: stateBytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
