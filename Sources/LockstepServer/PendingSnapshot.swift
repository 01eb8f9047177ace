import LockstepCore
import LockstepJSON
import LockstepStorage
import Logging

/// A room's state and history at one version, taken on the loop (both are values, so taking them copies nothing) and
/// encoded as a ``StoredSnapshot`` later, off the loop where the pipeline allows: serializing up to `--undo-depth`
/// history entries is most of what a snapshot costs.
struct PendingSnapshot: Sendable {
    let room: String
    let version: Int
    let state: JSON
    let history: History
    let stateVersion: Int

    func encoded() -> StoredSnapshot {
        StoredSnapshot(
            room: room, version: version, state: state.serialized(), history: HistoryCoding.encode(history),
            stateVersion: stateVersion)
    }

    /// `snapshots` encoded on the task pool, not on the caller's thread.
    static func encodedAway(_ snapshots: [PendingSnapshot]) async -> [StoredSnapshot] {
        guard !snapshots.isEmpty else { return [] }
        return await Task.detached { snapshots.map { $0.encoded() } }.value
    }
}

extension PendingSnapshot {
    /// `room`'s state and history now, for storage to replay only what comes after; the room counts changes from
    /// it. Nil (and logged) when the state cannot be encoded.
    init?(of room: Room, configuration: ServerConfiguration, logger: Logger) {
        do {
            self.init(
                room: room.name, version: room.engine.store.version, state: try room.engine.store.stateJSON(),
                history: room.engine.store.history, stateVersion: configuration.app.evolution.version)
            room.changesSinceSnapshot = 0
        } catch {
            logger.error("cannot snapshot a room", metadata: ["room": "\(room.name)", "error": "\(error)"])
            return nil
        }
    }

    /// The snapshots due with `room`'s change of `version`: its initial state with its first change, its state every
    /// `--snapshot-interval` changes (the room counts them).
    static func due(
        with version: Int, of room: Room, configuration: ServerConfiguration, logger: Logger
    ) -> [PendingSnapshot] {
        var due = initial(of: room.name, storing: version, configuration: configuration)
        room.changesSinceSnapshot += 1
        if room.changesSinceSnapshot >= configuration.snapshotInterval,
            let snapshot = PendingSnapshot(of: room, configuration: configuration, logger: logger)
        {
            due.append(snapshot)
        }
        return due
    }

    /// With a room's first change (`version` 1): the initial state as a snapshot of version 0. A room is then always
    /// read from a stored state, in the state version its changes were written in, never replayed onto a newer app's
    /// initial state: a `State` changed without a migration fails for a young room as for an old one, in testing,
    /// not only once rooms have snapshots. (A room with no snapshot is taken as stored in version 1, as every room was
    /// before apps had state versions.)
    static func initial(of room: String, storing version: Int, configuration: ServerConfiguration) -> [PendingSnapshot]
    {
        guard version == 1,
            let state = try? configuration.app.makeStore(undoDepth: configuration.undoDepth).stateJSON()
        else { return [] }
        return [
            PendingSnapshot(
                room: room, version: 0, state: state, history: History(depth: configuration.undoDepth),
                stateVersion: configuration.app.evolution.version)
        ]
    }
}
