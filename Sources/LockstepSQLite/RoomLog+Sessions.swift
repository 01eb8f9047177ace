import Foundation
import GRDB
public import LockstepStorage

/// Session marks and room epochs, in the same SQLite file and transactions as the changes.
extension RoomLog {
    /// The schema this code writes (`PRAGMA user_version`): 1 added `session_marks` and `room_epochs`, 2 the snapshots'
    /// `state_version` and the app marker (`RoomLog+StateVersions.swift`), 3 the marks' `answer` (idempotency keys) and
    /// `timers` (`RoomLog+Timers.swift`).
    static let schemaVersion = 3

    /// Brings an older database up to ``schemaVersion``; refuses one written by a newer server.
    static func migrateSessions(_ db: Database) throws {
        let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        guard version <= schemaVersion else {
            throw StorageError.database(
                "the database has schema version \(version), newer than this server's \(schemaVersion); "
                    + "run a newer lockstep")
        }
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS session_marks (
                    room TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL, time REAL NOT NULL, answer TEXT,
                    PRIMARY KEY (room, session)
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS room_epochs (
                    room TEXT PRIMARY KEY NOT NULL, epoch TEXT NOT NULL
                ) WITHOUT ROWID;
                """)
        let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(session_marks)").map { $0["name"] as String }
        if !columns.contains("answer") { try db.execute(sql: "ALTER TABLE session_marks ADD COLUMN answer TEXT") }
    }

    /// Statements are compiled once per connection (`cachedStatement`): they run in every group commit.
    static func write(_ sessions: SessionWrites, _ db: Database, now: Double) throws {
        try writeTimers(sessions, db)
        for (room, epoch) in sessions.epochs {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO room_epochs (room, epoch) VALUES (?, ?)")
                .execute(arguments: [room, epoch])
        }
        var rooms = Set<String>()
        for mark in sessions.marks {
            rooms.insert(mark.room)
            try db.cachedStatement(
                sql: """
                    INSERT INTO session_marks (room, session, seq, time, answer) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (room, session) DO UPDATE
                        SET seq = max(seq, excluded.seq), time = excluded.time, answer = coalesce(excluded.answer, answer)
                    """
            ).execute(arguments: [mark.room, mark.session, mark.seq, mark.time, mark.storedColumn])
        }
        for room in rooms {
            if sessions.idleSeconds.isFinite {
                try db.cachedStatement(sql: "DELETE FROM session_marks WHERE room = ? AND time < ?")
                    .execute(arguments: [room, now - sessions.idleSeconds])
            }
            try db.cachedStatement(
                sql: """
                    DELETE FROM session_marks WHERE room = ?1 AND session NOT IN (
                        SELECT session FROM session_marks WHERE room = ?1 ORDER BY time DESC, session LIMIT ?2)
                    """
            ).execute(arguments: [room, sessions.limit])
        }
    }

    public func marks(room: String) async throws(StorageError) -> [StoredMark] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT session, seq, time, answer FROM session_marks WHERE room = ?", arguments: [room]
            ).map {
                StoredMark(room: room, session: $0["session"], seq: $0["seq"], time: $0["time"], stored: $0["answer"])
            }
        }
    }

    public func mark(room: String, session: String) async throws(StorageError) -> StoredMark? {
        try await read { db in
            try Row.fetchOne(
                db, sql: "SELECT seq, time, answer FROM session_marks WHERE room = ? AND session = ?",
                arguments: [room, session]
            ).map { StoredMark(room: room, session: session, seq: $0["seq"], time: $0["time"], stored: $0["answer"]) }
        }
    }

    public func epoch(room: String) async throws(StorageError) -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT epoch FROM room_epochs WHERE room = ?", arguments: [room])
        }
    }
}
