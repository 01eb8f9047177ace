import Foundation
import GRDB
public import LockstepStorage

/// Which app a data directory belongs to, and the state version of each snapshot.
extension RoomLog {
    /// Adds the snapshots' `state_version` (1 for those stored before it) and the `lockstep_meta` table whose `app`
    /// row names the app whose rooms the file holds: written by the first server that opens it, checked by every
    /// later one. Then stamps the file with ``schemaVersion``.
    static func migrateApps(_ db: Database, directory: String, app: String?) throws {
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        if version < 2 {
            let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(snapshots)").map { $0["name"] as String }
            if !columns.contains("state_version") {
                try db.execute(sql: "ALTER TABLE snapshots ADD COLUMN state_version INTEGER NOT NULL DEFAULT 1")
            }
        }
        try db.execute(
            sql: "CREATE TABLE IF NOT EXISTS lockstep_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        if let app {
            let stored = try String.fetchOne(db, sql: "SELECT value FROM lockstep_meta WHERE key = 'app'")
            if let stored, stored != app {
                throw StorageError.directoryOfAnotherApp(path: directory, stored: stored, running: app)
            }
            if stored == nil {
                // A directory from before the marker is adopted by the app that opens it.
                try db.execute(sql: "INSERT INTO lockstep_meta (key, value) VALUES ('app', ?)", arguments: [app])
            }
        }
        try db.execute(sql: "PRAGMA user_version = \(schemaVersion)")
    }

    /// Replaces what `snapshot.room` holds with `snapshot`, its state migrated to a newer state version, in one
    /// transaction: older snapshots and the changes up to it go (they describe the older shape), and `epoch` names the
    /// room's history from now on.
    public func storeMigration(_ snapshot: StoredSnapshot, epoch: String) async throws(StorageError) {
        let now = Date().timeIntervalSince1970
        try await write { db in
            try Self.store(snapshot, db, now: now)
            try db.execute(
                sql: "DELETE FROM changes WHERE room = ? AND version <= ?",
                arguments: [snapshot.room, snapshot.version])
            try db.execute(
                sql: "INSERT OR REPLACE INTO room_epochs (room, epoch) VALUES (?, ?)",
                arguments: [snapshot.room, epoch])
        }
    }
}
