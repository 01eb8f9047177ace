import Foundation
import LockstepPostgres
import LockstepSQLite
import LockstepStorage
import LockstepTestSupport
import Testing

extension PostgresTests {
    /// The RoomStorage methods mean what RoomLog's do: both are fed the same writes and must answer the same.
    @Suite struct PostgresLogTests {
        @Test func answersLikeRoomLog() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let storage = try await openStorage(server)
            defer { storage.close() }
            let directory = NSTemporaryDirectory() + "lockstep-pg-log-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let log = try RoomLog(directory: directory, sync: .normal)
            defer { log.close() }
            let storages: [any RoomStorage] = [log, storage]

            let now = Date().timeIntervalSince1970
            var sessions = SessionWrites(idleSeconds: 3_600, limit: 2)
            sessions.epochs = ["a": "first", "b": "bee"]
            sessions.marks = [
                StoredMark(room: "a", session: "s1", seq: 1, time: now), StoredMark(room: "a", session: "s2", seq: 4, time: now + 1),
                StoredMark(room: "a", session: "s1", seq: 3, time: now + 2), StoredMark(room: "a", session: "s3", seq: 1, time: now + 3),
                StoredMark(room: "a", session: "idle", seq: 9, time: now - 7_200), StoredMark(room: "b", session: "s1", seq: 5, time: now),
            ]
            let writes: [(changes: [StoredChange], snapshots: [StoredSnapshot], sessions: SessionWrites)] = [
                ((1...5).map { change("a", $0) } + [change("b", 1)], [], sessions),
                (
                    (6...8).map { change("a", $0) },
                    [StoredSnapshot(room: "a", version: 7, state: Array("{\"n\":7}".utf8), history: [1, 2, 3])],
                    {
                        var later = SessionWrites(idleSeconds: 3_600, limit: 2)
                        later.epochs = ["a": "second"]
                        later.marks = [StoredMark(room: "a", session: "s3", seq: 0, time: now + 4)]
                        return later
                    }()
                ),
                ([change("a", 9)], [StoredSnapshot(room: "a", version: 9, state: [9], history: [])], SessionWrites(idleSeconds: 1, limit: 9)),
            ]
            for write in writes {
                for storage in storages {
                    let (changes, snapshots, sessions) = write
                    try await storage.append(changes: changes, snapshots: snapshots, sessions: sessions, keepHistory: 3)
                }
            }

            struct Answers: Equatable {
                var snapshot: StoredSnapshot?
                var loaded: [StoredChange]?
                var all: [StoredChange]
                var page: [StoredChange]
                var oldest: Int?
                var marks: [String: Int]
                var epoch: String?
            }
            func answers(_ storage: any RoomStorage, _ room: String) async throws -> Answers {
                let loaded = try await storage.load(room: room)
                return Answers(
                    snapshot: loaded?.snapshot, loaded: loaded?.changes, all: try await storage.changes(room: room, after: 0),
                    page: try await storage.changes(room: room, after: 6, through: 9, limit: 2),
                    oldest: try await storage.oldestChange(room: room),
                    marks: Dictionary(uniqueKeysWithValues: try await storage.marks(room: room).map { ($0.session, $0.seq) }),
                    epoch: try await storage.epoch(room: room))
            }
            for room in ["a", "b", "never"] {
                #expect(try await answers(storage, room) == answers(log, room), "room \(room)")
            }
            let a = try await answers(storage, "a")
            #expect(a.all.map(\.version) == [7, 8, 9])
            #expect(a.snapshot?.version == 9 && a.loaded == [])
            #expect(a.marks == ["s1": 3, "s3": 1])
            #expect(a.epoch == "first")
            #expect(try await answers(storage, "never").snapshot == nil)

            for storage in storages { try await storage.truncate(room: "a", from: 8) }
            #expect(try await answers(storage, "a") == answers(log, "a"))
            #expect(try await answers(storage, "a").all.map(\.version) == [7])
        }

        /// A locked write stores and prunes marks in one statement: the room keeps the most recently moved marks within
        /// the limit, counting those written now, and drops idle ones, as the log on SQLite does.
        @Test func aLockedWriteKeepsTheNewestMarksWithinTheLimit() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let storage = try await openStorage(server)
            defer { storage.close() }
            let now = Date().timeIntervalSince1970
            func write(_ version: Int, _ marks: [(String, Int, Double)], idleSeconds: Double = 3_600) async throws {
                var writes = SessionWrites(idleSeconds: idleSeconds, limit: 2)
                writes.marks = marks.map { StoredMark(room: "a", session: $0.0, seq: $0.1, time: now + $0.2) }
                let sessions = writes
                try await storage.write(room: "a", after: version - 1, sessions: marks.map(\.0)) { _ in
                    RoomWrite(changes: [change("a", version)], snapshots: [], sessions: sessions)
                }
            }
            func marks() async throws -> [String: Int] {
                Dictionary(uniqueKeysWithValues: try await storage.marks(room: "a").map { ($0.session, $0.seq) })
            }
            try await write(1, [("s1", 1, -40), ("s2", 1, -30)])
            #expect(try await marks() == ["s1": 1, "s2": 1])
            try await write(2, [("s3", 1, -20)])
            #expect(try await marks() == ["s2": 1, "s3": 1])
            try await write(3, [("s2", 2, -10)])
            #expect(try await marks() == ["s2": 2, "s3": 1])
            // s3 moved 20 s ago and s2 10 s ago: with marks idle after 15 s, only s3 is.
            try await write(4, [], idleSeconds: 15)
            #expect(try await marks() == ["s2": 2])
        }

        /// Another server's snapshot, committed between the load's read of the snapshot and of the changes after it,
        /// deletes the changes it covers: the load still sees one moment, never an older snapshot without its changes.
        @Test func aLoadSeesOneMomentOfTheLog() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let storage = try await openStorage(server)
            defer { storage.close() }
            let older = StoredSnapshot(room: "r", version: 2, state: Array("2".utf8), history: [])
            try await storage.append(
                changes: (1...5).map { change("r", $0) }, snapshots: [older],
                sessions: SessionWrites(idleSeconds: 60, limit: 9), keepHistory: 5)
            // The other server holds the changes until the load waits for them, then writes a snapshot of version 5
            // that deletes every change it covers.
            let other = Task {
                try await offThePool {
                    try server.sql(
                        """
                        BEGIN;
                        LOCK TABLE changes IN ACCESS EXCLUSIVE MODE;
                        DO $$ BEGIN
                            FOR attempt IN 1..3000 LOOP
                                EXIT WHEN EXISTS (
                                    SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'changes'::regclass);
                                PERFORM pg_sleep(0.01);
                            END LOOP;
                        END $$;
                        INSERT INTO snapshots (room, version, state, history) VALUES ('r', 5, '\\x35', '\\x');
                        DELETE FROM snapshots WHERE room = 'r' AND version < 5;
                        DELETE FROM changes WHERE room = 'r';
                        COMMIT;
                        """)
                }
            }
            let locked = """
                SELECT count(*) FROM pg_locks
                WHERE granted AND mode = 'AccessExclusiveLock' AND relation = 'changes'::regclass
                """
            try await server.waitUntil("the other server to lock the changes", locked, answers: "1")
            let loaded = try #require(try await storage.load(room: "r"))
            _ = try await other.value
            #expect(loaded.snapshot?.version == 2)
            #expect(loaded.changes.map(\.version) == [3, 4, 5])
            let after = try #require(try await storage.load(room: "r"))
            #expect(after.snapshot?.version == 5 && after.changes.isEmpty)
        }
    }
}
