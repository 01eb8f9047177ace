import Foundation
import GRDB
public import LockstepStorage

/// Pending timers, in the same SQLite file and transactions as the changes: a timer that fires is removed in the
/// write that stores its change, so it fires once across a crash.
extension RoomLog {
    static func migrateTimers(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS timers (
                    room TEXT NOT NULL, name TEXT NOT NULL, due INTEGER NOT NULL, ord INTEGER NOT NULL,
                    request BLOB NOT NULL, PRIMARY KEY (room, name)
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS timers_due ON timers (due, ord);
                """)
    }

    static func writeTimers(_ sessions: SessionWrites, _ db: Database) throws {
        for timer in sessions.timers {
            try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO timers (room, name, due, ord, request) VALUES (?, ?, ?, ?, ?)"
            ).execute(arguments: [timer.room, timer.name, timer.due, timer.order, Data(timer.request)])
        }
        for key in sessions.timersGone {
            try db.cachedStatement(sql: "DELETE FROM timers WHERE room = ? AND name = ?")
                .execute(arguments: [key.room, key.name])
        }
    }

    public func timers(dueBy due: Int) async throws(StorageError) -> [StoredTimer] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT room, name, due, ord, request FROM timers WHERE due <= ? ORDER BY due, ord",
                arguments: [due]
            ).map(Self.timer)
        }
    }

    public func timers(room: String) async throws(StorageError) -> [StoredTimer] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT room, name, due, ord, request FROM timers WHERE room = ? ORDER BY due, ord",
                arguments: [room]
            ).map(Self.timer)
        }
    }

    private static func timer(_ row: Row) -> StoredTimer {
        StoredTimer(
            room: row["room"], name: row["name"], due: row["due"], order: row["ord"],
            request: Array(row["request"] as Data))
    }
}
