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
    }
}
