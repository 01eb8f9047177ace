/// Where a server keeps its rooms: an append-only log of changes plus snapshots.
///
/// ``RoomLog`` (SQLite) is the embedded default; another store (a replicated database, a test
/// double of your own) plugs in through ``SyncServer``'s `storage` parameter. Calls come from one
/// writer at a time, off the server's loop thread, except `load`, `changes` and `truncate`,
/// which the loop makes when a room is first used.
public protocol RoomStorage: Sendable {
    /// Makes `changes` and `snapshots` durable together, then drops what `keepHistory` no longer needs.
    func append(changes: [StoredChange], snapshots: [StoredSnapshot], keepHistory: Int) throws(StorageError)
    /// The latest snapshot of `room` and every change after it; nil for a room never stored.
    func load(room: String) throws(StorageError) -> StoredRoom?
    /// The stored changes of `room` after `version`, oldest first.
    func changes(room: String, after version: Int) throws(StorageError) -> [StoredChange]
    /// At most `limit` stored changes of `room` from `after + 1` through `through`, oldest first: a page of the
    /// log, for rebuilding past versions and streaming recordings without reading the whole history.
    func changes(room: String, after version: Int, through last: Int, limit: Int) throws(StorageError) -> [StoredChange]
    /// The oldest version of `room` the log still has a change for; nil when it has none.
    func oldestChange(room: String) throws(StorageError) -> Int?
    /// Forgets `room`'s changes from `version` on.
    func truncate(room: String, from version: Int) throws(StorageError)
    /// Releases the storage; the server calls it once, when it shuts down.
    func close()

    /// Like `append(changes:snapshots:keepHistory:)`, with session marks and room epochs in the same transaction.
    func append(
        changes: [StoredChange], snapshots: [StoredSnapshot], sessions: SessionWrites, keepHistory: Int
    ) throws(StorageError)
    /// The session marks kept for `room`.
    func marks(room: String) throws(StorageError) -> [StoredMark]
    /// `room`'s stored epoch; nil until a write stored one.
    func epoch(room: String) throws(StorageError) -> String?
    /// The mark kept for one session of `room`, read when a client of that session joins.
    func mark(room: String, session: String) throws(StorageError) -> StoredMark?
}

/// Storage that keeps no sessions or epochs: requests are deduplicated only while the server runs, and a room's
/// epoch changes with each restart (so resuming clients get a snapshot).
extension RoomStorage {
    public func append(
        changes: [StoredChange], snapshots: [StoredSnapshot], sessions: SessionWrites, keepHistory: Int
    ) throws(StorageError) {
        try append(changes: changes, snapshots: snapshots, keepHistory: keepHistory)
    }

    public func marks(room: String) throws(StorageError) -> [StoredMark] { [] }

    public func epoch(room: String) throws(StorageError) -> String? { nil }
}

extension RoomStorage {
    /// Filters ``marks(room:)``; a storage that can read one mark should do so instead.
    public func mark(room: String, session: String) throws(StorageError) -> StoredMark? {
        try marks(room: room).first { $0.session == session }
    }
}

extension RoomStorage {
    /// Filters ``changes(room:after:)``; a storage that can read a range should do so instead.
    public func changes(
        room: String, after version: Int, through last: Int, limit: Int
    ) throws(StorageError) -> [StoredChange] {
        Array(try changes(room: room, after: version).prefix { $0.version <= last }.prefix(limit))
    }

    public func oldestChange(room: String) throws(StorageError) -> Int? {
        try changes(room: room, after: 0).first?.version
    }
}
