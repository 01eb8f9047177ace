import LockstepCore
import LockstepStorage
import Logging

/// What the server holds back until the log has what precedes it.
enum RoomRelease: HeldRelease {
    case patch(Room, Room.LoggedPatch)
    case reply(any Requester, RequestAnswer)
    /// An idle room whose snapshot at `version` is written: it may leave memory.
    case evict(Room, version: Int)

    /// The room it belongs to: the requester's, for a reply.
    var room: Room {
        switch self {
        case .patch(let room, _), .evict(let room, _): room
        case .reply(let requester, _): requester.room
        }
    }

    var roomName: String { room.name }

    var isReply: Bool {
        if case .reply = self { return true }
        return false
    }
}

extension DurabilityQueue where Release == RoomRelease {
    /// A change the server applied to `room`: its row, its patch held back until the row is stored, and the snapshots
    /// due with it.
    func append(
        _ patch: Room.LoggedPatch, message: [UInt8], record: ChangeRecord, in room: Room,
        configuration: ServerConfiguration, logger: Logger
    ) {
        append(
            StoredChange(room: room.name, version: patch.version, message: message, record: record.serialized()),
            holding: .patch(room, patch),
            snapshots: PendingSnapshot.due(with: patch.version, of: room, configuration: configuration, logger: logger))
    }
}
