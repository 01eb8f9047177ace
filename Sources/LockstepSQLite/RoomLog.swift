import Foundation
import GRDB
import Synchronization
public import LockstepStorage

/// The durable log of every room: SQLite in write-ahead mode, one file in the data directory.
///
/// A change is written (and, with `--sync full`, flushed to disk) before its patch or ack leaves
/// the server; snapshots bound how much of the log a restart replays, and compaction bounds the
/// log itself. One server at a time may use a data directory: a lock file enforces it.
///
/// ``init(readingOnly:app:)`` opens a directory for reading alone, as `lockstep check` does: it writes nothing, and
/// it cannot be opened while a server uses the directory (nor a server started while it is open).
public final class RoomLog: RoomStorage {
    /// How far a commit goes before it counts as written.
    public enum Sync: String, Sendable, CaseIterable {
        /// Survives a killed server process (SQLite `synchronous=NORMAL` in WAL mode).
        case normal
        /// Also survives power loss: every commit waits for the disk (`synchronous=FULL`).
        case full
    }

    /// The data directory: `rooms.sqlite`, its write-ahead files and the lock file.
    public let directory: String
    let database: DatabaseQueue
    private let lock: DirectoryLock
    /// Whether the snapshots have a `state_version` column: a directory of schema 1, opened only for reading, is not
    /// migrated, and its snapshots are all of state version 1.
    private let snapshotsHaveStateVersions: Bool
    /// Set by ``close()``: a read or write still queued then fails instead of touching the closed database.
    private let closed = Atomic(false)
    /// Where every read and write runs, one at a time, as SQLite's single connection does them anyway.
    private let thread = LogThread(name: "lockstep.rooms")

    /// Opens (creating if needed) the log in `directory`.
    ///
    /// With `app`, refuses a directory whose rooms another app wrote, and marks an unmarked one as `app`'s; tools
    /// that read any app's rooms pass nil.
    public init(directory: String, sync: Sync, app: String? = nil) throws(StorageError) {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .unwritableDirectory(path: directory, reason: "\(error.localizedDescription)")
        }
        lock = try DirectoryLock(directory: directory)
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.label = "lockstep.rooms"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(sync == .full ? "FULL" : "NORMAL")")
        }
        do {
            database = try DatabaseQueue(path: directory + "/rooms.sqlite", configuration: configuration)
            try database.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS changes (
                            room TEXT NOT NULL, version INTEGER NOT NULL, message BLOB NOT NULL,
                            inverse BLOB NOT NULL, time REAL NOT NULL, PRIMARY KEY (room, version)
                        ) WITHOUT ROWID;
                        CREATE TABLE IF NOT EXISTS snapshots (
                            room TEXT NOT NULL, version INTEGER NOT NULL, state BLOB NOT NULL,
                            history BLOB NOT NULL, time REAL NOT NULL, PRIMARY KEY (room, version)
                        ) WITHOUT ROWID;
                        """)
                try Self.migrateSessions(db)
                try Self.migrateTimers(db)
                try Self.migrateApps(db, directory: directory, app: app)
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw .unwritableDirectory(path: directory, reason: "\(error)")
        }
        snapshotsHaveStateVersions = true
    }

    /// Opens the log in `directory` for reading only: nothing is created, migrated or written, and `rooms.sqlite`
    /// stays byte for byte as it was. Every write throws.
    ///
    /// It holds the directory's lock shared while open, so it throws `StorageError.directoryInUse` while a
    /// server uses the directory, and a server cannot start on it meanwhile; several readers may read at once. With
    /// `app`, it refuses a directory whose rooms another app wrote; an older schema is read as it is.
    public init(readingOnly directory: String, app: String? = nil) throws(StorageError) {
        self.directory = directory
        let file = directory + "/rooms.sqlite"
        guard FileManager.default.fileExists(atPath: file) else {
            throw .database("\(directory) holds no rooms: it has no rooms.sqlite")
        }
        // Released by its own deinit if opening fails below.
        lock = try DirectoryLock(directory: directory, shared: true)
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "lockstep.rooms.read"
        do {
            do {
                database = try DatabaseQueue(path: Self.readOnlyLocation(of: file), configuration: configuration)
            } catch {
                // An SQLite built without URI file names: the plain path, read-only.
                database = try DatabaseQueue(path: file, configuration: configuration)
            }
            snapshotsHaveStateVersions = try database.read { db in
                try Self.checkReadable(db, directory: directory, app: app)
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw .database("cannot read \(file): \(error)")
        }
    }

    /// Closes the database and lets another server use the directory.
    ///
    /// A write in flight finishes first; calls queued after it fail.
    public func close() {
        closed.store(true, ordering: .releasing)
        thread.stop { [database] in try? database.close() }
        lock.release()
    }

    /// Runs `body` in a read on the log's own thread, never on the caller's.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StorageError) -> T {
        try await onLogThread { try self.database.read(body) }
    }

    /// Runs `body` in one transaction on the log's own thread.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StorageError) -> T {
        try await onLogThread { try self.database.write(body) }
    }

    /// Runs `work` on the log's thread and resumes the caller where it was (the server's loop).
    private func onLogThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws(StorageError) -> T {
        let result: Result<T, StorageError> = await withCheckedContinuation { continuation in
            thread.async {
                continuation.resume(
                    returning: Result {
                        try self.checkOpen()
                        return try work()
                    }.mapError(Self.storageError))
            }
        }
        return try result.get()
    }

    private func checkOpen() throws {
        if closed.load(ordering: .acquiring) { throw StorageError.database("the room log is closed") }
    }

    private static func storageError(_ error: any Error) -> StorageError {
        error as? StorageError ?? .database("\(error)")
    }

    /// Writes `changes`, `snapshots` and session marks in one transaction: an acknowledged mark is as durable as
    /// the change it went with.
    public func append(
        changes: [StoredChange], snapshots: [StoredSnapshot], sessions: SessionWrites, keepHistory: Int
    ) async throws(StorageError) {
        let now = Date().timeIntervalSince1970
        try await write { db in
            try Self.write(sessions, db, now: now)
            // Compiled once per connection, not once per change: a group commit can carry thousands.
            let insert = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO changes (room, version, message, inverse, time) VALUES (?, ?, ?, ?, ?)")
            for change in changes {
                try insert.execute(
                    arguments: [change.room, change.version, Data(change.message), Data(change.record), now])
            }
            for snapshot in snapshots {
                try Self.store(snapshot, db, now: now)
                try db.execute(
                    sql: "DELETE FROM changes WHERE room = ? AND version <= ?",
                    arguments: [snapshot.room, snapshot.version - keepHistory]
                )
            }
        }
    }

    /// Stores `snapshot` and forgets the room's older ones.
    static func store(_ snapshot: StoredSnapshot, _ db: Database, now: Double) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO snapshots (room, version, state, history, time, state_version)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                snapshot.room, snapshot.version, Data(snapshot.state), Data(snapshot.history), now,
                snapshot.stateVersion,
            ])
        try db.execute(
            sql: "DELETE FROM snapshots WHERE room = ? AND version < ?", arguments: [snapshot.room, snapshot.version])
    }

    /// The latest snapshot of `room` and every change after it; nil for a room never stored.
    public func load(room: String) async throws(StorageError) -> StoredRoom? {
        let stateVersion = snapshotsHaveStateVersions ? "state_version" : "1 AS state_version"
        return try await read { db in
            let snapshotRow = try Row.fetchOne(
                db,
                sql: """
                    SELECT version, state, history, \(stateVersion) FROM snapshots WHERE room = ?
                    ORDER BY version DESC LIMIT 1
                    """,
                arguments: [room]
            )
            let snapshot = snapshotRow.map { row in
                StoredSnapshot(
                    room: room, version: row["version"], state: Array(row["state"] as Data),
                    history: Array(row["history"] as Data), stateVersion: row["state_version"]
                )
            }
            let changes = try Self.changes(db, room: room, after: snapshot?.version ?? 0)
            if snapshot == nil && changes.isEmpty { return nil }
            return StoredRoom(snapshot: snapshot, changes: changes)
        }
    }

    public func changes(
        room: String, after version: Int, through last: Int, limit: Int
    ) async throws(StorageError) -> [StoredChange] {
        try await read { db in
            try Self.changes(db, room: room, after: version, through: last, limit: limit)
        }
    }

    public func oldestChange(room: String) async throws(StorageError) -> Int? {
        try await read { db in
            try Int.fetchOne(db, sql: "SELECT MIN(version) FROM changes WHERE room = ?", arguments: [room])
        }
    }

    /// Forgets `room`'s changes from `version` on: a damaged tail is cut so the room reopens at the last good version.
    public func truncate(room: String, from version: Int) async throws(StorageError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM changes WHERE room = ? AND version >= ?", arguments: [room, version])
        }
    }

    private static func changes(
        _ db: Database, room: String, after version: Int, through last: Int = .max, limit: Int = .max
    ) throws -> [StoredChange] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT version, message, inverse FROM changes WHERE room = ? AND version > ? AND version <= ?
                ORDER BY version LIMIT ?
                """,
            arguments: [room, version, last, limit]
        ).map { row in
            StoredChange(
                room: room, version: row["version"], message: Array(row["message"] as Data),
                record: Array(row["inverse"] as Data)
            )
        }
    }
}
