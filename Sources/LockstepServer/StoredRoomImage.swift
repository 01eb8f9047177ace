import LockstepCore
import LockstepJSON
import LockstepStorage

/// A room as its storage has it, read and replayed, ready to be put in memory.
struct StoredRoomImage: Sendable {
    /// The replayed store; nil for a room never stored.
    let replay: RoomReplay?
    /// The version of the snapshot the replay started from.
    let snapshotVersion: Int
    /// The changes kept for resuming clients, oldest first.
    let recent: [StoredChange]
    /// The room's epoch; nil until a client made the room exist.
    var epoch: String?
    let marks: [StoredMark]

    /// A room never stored.
    static let none = StoredRoomImage(replay: nil, snapshotVersion: 0, recent: [], epoch: nil, marks: [])

    /// Whether any client ever used the room: a read of one never used finds nothing.
    var exists: Bool { replay != nil || epoch != nil }

    /// Reads `room` from `log`: its latest snapshot and the changes after it, replayed. With `repairing`, a damaged
    /// tail is cut off the log (a log of this server's own; a shared one may be being written by another server).
    static func read(
        room: String, from log: any RoomStorage, configuration: ServerConfiguration, repairing: Bool
    ) async -> Result<StoredRoomImage, StorageError> {
        do throws(StorageError) {
            var epoch = try await log.epoch(room: room)
            let marks = try await log.marks(room: room)
            guard let stored = try await log.load(room: room) else {
                return .success(
                    StoredRoomImage(replay: nil, snapshotVersion: 0, recent: [], epoch: epoch, marks: marks))
            }
            let replay = try RoomReplay(stored, app: configuration.app, undoDepth: configuration.undoDepth)
            if repairing, let damaged = replay.damagedFrom { try await log.truncate(room: room, from: damaged) }
            if replay.migratedFrom != nil {
                // Written back before anything else: the room migrates once, and its later changes follow a snapshot
                // in the new shape. Its history starts over, so clients resuming from before get a snapshot.
                let migrated = Room.epoch(migrating: epoch, to: configuration.app.evolution.version)
                try await log.storeMigration(
                    StoredSnapshot(
                        room: room, version: replay.store.version, state: try Self.state(of: replay, room: room),
                        history: HistoryCoding.encode(replay.store.history),
                        stateVersion: configuration.app.evolution.version),
                    epoch: migrated)
                epoch = migrated
            } else if configuration.app.evolution.version > 1 {
                // Another server may have migrated the room between the reads of its epoch and of its state: the
                // epoch to serve is the one stored with the state that was read.
                epoch = try await log.epoch(room: room)
            }
            let version = replay.store.version
            // A migrated room's snapshot is the one just written.
            let snapshotVersion = replay.migratedFrom != nil ? version : stored.snapshot?.version ?? 0
            let recent = try await log.changes(
                room: room, after: max(0, version - configuration.resumeWindow), through: version, limit: .max)
            return .success(
                StoredRoomImage(
                    replay: replay, snapshotVersion: snapshotVersion, recent: recent, epoch: epoch, marks: marks))
        } catch {
            return .failure(error)
        }
    }

    private static func state(of replay: RoomReplay, room: String) throws(StorageError) -> [UInt8] {
        do {
            return try replay.store.stateJSON().serialized()
        } catch {
            throw .unloadableRoom(room: room, version: replay.store.version, reason: error.message)
        }
    }
}
