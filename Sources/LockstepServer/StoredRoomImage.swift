import LockstepCore
import LockstepStorage

/// A room as its storage has it, read and replayed off the loop when the storage is shared, ready to be put in
/// memory.
struct StoredRoomImage: Sendable {
    /// The replayed store; nil for a room never stored.
    let replay: RoomReplay?
    /// The version of the snapshot the replay started from.
    let snapshotVersion: Int
    /// The changes kept for resuming clients, oldest first.
    let recent: [StoredChange]
    var epoch: String?
    let marks: [StoredMark]

    /// A room never stored.
    static let none = StoredRoomImage(replay: nil, snapshotVersion: 0, recent: [], epoch: nil, marks: [])

    /// Reads `room` from `log`: its latest snapshot and the changes after it, replayed; a damaged tail is cut off the
    /// log. Blocks on the storage: off the loop when it is shared.
    static func read(
        room: String, from log: any RoomStorage, configuration: ServerConfiguration
    ) throws -> StoredRoomImage {
        let epoch = try log.epoch(room: room)
        let marks = try log.marks(room: room)
        guard let stored = try log.load(room: room) else {
            return StoredRoomImage(replay: nil, snapshotVersion: 0, recent: [], epoch: epoch, marks: marks)
        }
        let replay = try RoomReplay(stored, app: configuration.app, undoDepth: configuration.undoDepth)
        if let damaged = replay.damagedFrom { try log.truncate(room: room, from: damaged) }
        let version = replay.store.version
        let recent = try log.changes(room: room, after: max(0, version - configuration.resumeWindow))
            .prefix { $0.version <= version }
        return StoredRoomImage(
            replay: replay, snapshotVersion: stored.snapshot?.version ?? 0, recent: Array(recent), epoch: epoch,
            marks: marks)
    }
}
