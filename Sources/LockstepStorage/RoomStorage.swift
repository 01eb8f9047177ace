/// Where a server keeps its rooms: an append-only log of changes plus snapshots, session marks and epochs.
///
/// `RoomLog` (SQLite, in `LockstepSQLite`) is the embedded default and `PostgresRoomStorage` (in `LockstepPostgres`)
/// the shared one; another store plugs in through `SyncServer`'s `storage` parameter. Every call is asynchronous and
/// suspends rather than blocks its caller, so the server may make it from its loop: a storage does its waiting on its
/// own threads or connections; its calls run on their caller's executor (this module is built with
/// `NonisolatedNonsendingByDefault`), so the server's loop resumes without a hop through the shared task pool. Writes
/// come one at a time per room, reads at any time.
public protocol RoomStorage: Sendable {
    /// Makes `changes`, `snapshots`, session marks and room epochs durable together, then drops what `keepHistory` no
    /// longer needs: for every room that got a snapshot, older snapshots and changes more than `keepHistory` versions
    /// before it.
    func append(
        changes: [StoredChange], snapshots: [StoredSnapshot], sessions: SessionWrites, keepHistory: Int
    ) async throws(StorageError)
    /// The latest snapshot of `room` and every change after it; nil for a room never stored.
    func load(room: String) async throws(StorageError) -> StoredRoom?
    /// At most `limit` stored changes of `room` from `after + 1` through `through`, oldest first: a page of the log,
    /// for catching up, rebuilding past versions and streaming recordings without reading the whole history.
    func changes(room: String, after version: Int, through last: Int, limit: Int) async throws(StorageError)
        -> [StoredChange]
    /// The oldest version of `room` the log still has a change for; nil when it has none.
    func oldestChange(room: String) async throws(StorageError) -> Int?
    /// Replaces what `snapshot.room` holds with `snapshot`, whose state a server migrated to a newer state version,
    /// in one transaction: older snapshots and every change up to `snapshot.version` go (they describe the older
    /// shape) and `epoch` becomes the room's. A storage several servers share throws, storing nothing, when the room
    /// has moved past that version.
    func storeMigration(_ snapshot: StoredSnapshot, epoch: String) async throws(StorageError)
    /// Forgets `room`'s changes from `version` on.
    func truncate(room: String, from version: Int) async throws(StorageError)
    /// The session marks kept for `room`.
    func marks(room: String) async throws(StorageError) -> [StoredMark]
    /// The mark kept for one session of `room`, read when a client of that session joins.
    func mark(room: String, session: String) async throws(StorageError) -> StoredMark?
    /// `room`'s stored epoch; nil until a write stored one.
    func epoch(room: String) async throws(StorageError) -> String?
    /// The pending timers of every room due by `due` (milliseconds since the Unix epoch; `.max` for all), soonest
    /// first; written with ``SessionWrites/timers``.
    func timers(dueBy due: Int) async throws(StorageError) -> [StoredTimer]
    /// The pending timers of `room`, soonest first.
    func timers(room: String) async throws(StorageError) -> [StoredTimer]
    /// Releases the storage without waiting on the network; the server calls it once, when it shuts down, after its
    /// last write.
    func close()
}

extension RoomStorage {
    /// Every stored change of `room` after `version`, oldest first.
    public func changes(room: String, after version: Int) async throws(StorageError) -> [StoredChange] {
        try await changes(room: room, after: version, through: .max, limit: .max)
    }
}
