import Foundation
import GRDB
public import LockstepStorage

/// Reading a data directory without a server: which rooms it holds, and how ``RoomLog/init(readingOnly:app:)``
/// opens it without writing.
extension RoomLog {
    /// Every room that has a stored state or change, by name: the rooms a server would load from this log.
    public func rooms() async throws(StorageError) -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT room FROM snapshots UNION SELECT room FROM changes ORDER BY room")
        }
    }

    /// Where SQLite opens `file` for reading alone. With no write-ahead file, or an empty one (the last server closed
    /// it cleanly), as immutable: SQLite then creates no `-wal` or `-shm` file beside it. A write-ahead file with
    /// content (a server that stopped without closing it) holds committed changes, so it is read too, as SQLite
    /// reads it, which may create the `-shm` index beside it.
    static func readOnlyLocation(of file: String) -> String {
        let writeAhead = (try? FileManager.default.attributesOfItem(atPath: file + "-wal")[.size] as? Int) ?? 0
        let uri = URL(fileURLWithPath: file).absoluteString
        return uri + (writeAhead > 0 ? "?mode=ro" : "?mode=ro&immutable=1")
    }

    /// Checks, without writing, that this code can read the log: its schema is not newer, and (given `app`) it holds
    /// that app's rooms. Returns whether its snapshots carry their state version (schema 2 on).
    static func checkReadable(_ db: Database, directory: String, app: String?) throws -> Bool {
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        guard version <= schemaVersion else {
            throw StorageError.database(
                "the database has schema version \(version), newer than this lockstep's \(schemaVersion); "
                    + "run a newer lockstep")
        }
        guard try db.tableExists("snapshots"), try db.tableExists("changes") else {
            throw StorageError.database("\(directory)/rooms.sqlite is not a lockstep room log")
        }
        if let app, try db.tableExists("lockstep_meta"),
            let stored = try String.fetchOne(db, sql: "SELECT value FROM lockstep_meta WHERE key = 'app'"),
            stored != app
        {
            throw StorageError.directoryOfAnotherApp(path: directory, stored: stored, running: app)
        }
        return try db.columns(in: "snapshots").contains { $0.name == "state_version" }
    }
}
