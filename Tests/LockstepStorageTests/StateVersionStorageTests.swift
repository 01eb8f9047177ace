import Foundation
import GRDB
import LockstepSQLite
import LockstepStorage
import Testing

/// The state version of stored snapshots and the app a data directory belongs to, in a real SQLite file.
@Suite struct StateVersionStorageTests {
    /// A file written before state versions (schema 1) is upgraded in place: its snapshots are of state version 1.
    @Test func aDatabaseOfSchema1IsUpgradedAndItsSnapshotsAreOfVersion1() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-schema-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let database = try DatabaseQueue(path: directory + "/rooms.sqlite")
        try await database.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE snapshots (
                        room TEXT NOT NULL, version INTEGER NOT NULL, state BLOB NOT NULL,
                        history BLOB NOT NULL, time REAL NOT NULL, PRIMARY KEY (room, version)
                    ) WITHOUT ROWID;
                    INSERT INTO snapshots VALUES ('r', 3, '{"n":3}', '{}', 0);
                    CREATE TABLE session_marks (
                        room TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL, time REAL NOT NULL,
                        PRIMARY KEY (room, session)
                    ) WITHOUT ROWID;
                    INSERT INTO session_marks VALUES ('r', 's', 4, 0);
                    PRAGMA user_version = 1;
                    """)
        }
        try database.close()

        let log = try RoomLog(directory: directory, sync: .normal, app: "counter")
        let stored = try #require(try await log.load(room: "r"))
        #expect(stored.snapshot?.stateVersion == 1)
        let snapshot = StoredSnapshot(
            room: "r", version: 3, state: Array(#"{"n":3,"m":0}"#.utf8), history: [], stateVersion: 2)
        try await log.storeMigration(snapshot, epoch: "migrated")
        #expect(try await log.load(room: "r")?.snapshot == snapshot)
        #expect(try await log.epoch(room: "r") == "migrated")
        log.close()

        let reopened = try DatabaseQueue(path: directory + "/rooms.sqlite")
        defer { try? reopened.close() }
        #expect(try await reopened.read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == 3)
        // Schema 3: marks keep the answer of an idempotency key's request.
        let markColumns = try await reopened.read { db in
            try Row.fetchAll(db, sql: "PRAGMA table_info(session_marks)").map { $0["name"] as String }
        }
        #expect(markColumns.contains("answer"))
        #expect(try await reopened.read { try Int.fetchOne($0, sql: "SELECT seq FROM session_marks") } == 4)
        #expect(
            try await reopened.read { try String.fetchOne($0, sql: "SELECT value FROM lockstep_meta") } == "counter")
    }

    /// A migration written back replaces the room's log up to it: the changes of the older shape go.
    @Test func aStoredMigrationDropsTheChangesItReplaces() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-migration-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try RoomLog(directory: directory, sync: .normal)
        defer { log.close() }
        let changes = (1...4).map { StoredChange(room: "r", version: $0, message: [UInt8($0)], record: []) }
        try await log.append(
            changes: changes, snapshots: [], sessions: SessionWrites(idleSeconds: 60, limit: 10), keepHistory: 10)
        try await log.storeMigration(
            StoredSnapshot(room: "r", version: 3, state: [], history: [], stateVersion: 2), epoch: "e")
        let stored = try #require(try await log.load(room: "r"))
        #expect(stored.snapshot?.version == 3)
        #expect(stored.changes.map(\.version) == [4])
        #expect(try await log.oldestChange(room: "r") == 4)
    }
}
