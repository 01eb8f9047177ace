import Foundation
import GRDB
import LockstepSQLite
import LockstepStorage
import Testing

/// Session marks and room epochs in a real SQLite log.
@Suite struct SessionStorageTests {
    private func withLog<T>(_ body: (RoomLog, String) async throws -> T) async throws -> T {
        let directory = NSTemporaryDirectory() + "lockstep-sessions-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try RoomLog(directory: directory, sync: .normal)
        defer { log.close() }
        return try await body(log, directory)
    }

    @Test func marksAreBoundedPerRoomAndForgottenWhenIdle() async throws {
        try await withLog { log, _ in
            let now = Date().timeIntervalSince1970
            var writes = SessionWrites(idleSeconds: 3_600, limit: 3)
            writes.marks = (1...5).map { StoredMark(room: "r", session: "s\($0)", seq: $0, time: now + Double($0)) }
            writes.marks.append(StoredMark(room: "r", session: "old", seq: 9, time: now - 7_200))
            writes.marks.append(StoredMark(room: "other", session: "s1", seq: 7, time: now))
            try await log.append(changes: [], snapshots: [], sessions: writes, keepHistory: 10)
            #expect(Set(try await log.marks(room: "r").map(\.session)) == ["s3", "s4", "s5"])
            #expect(try await log.marks(room: "other").map(\.seq) == [7])

            // A mark never moves down.
            writes.marks = [StoredMark(room: "r", session: "s5", seq: 2, time: now + 10)]
            try await log.append(changes: [], snapshots: [], sessions: writes, keepHistory: 10)
            #expect(try await log.marks(room: "r").first { $0.session == "s5" }?.seq == 5)
        }
    }

    @Test func aRoomKeepsItsFirstEpoch() async throws {
        try await withLog { log, _ in
            #expect(try await log.epoch(room: "r") == nil)
            var writes = SessionWrites(idleSeconds: 3_600, limit: 10)
            writes.epochs = ["r": "first"]
            try await log.append(changes: [], snapshots: [], sessions: writes, keepHistory: 10)
            writes.epochs = ["r": "second"]
            try await log.append(changes: [], snapshots: [], sessions: writes, keepHistory: 10)
            #expect(try await log.epoch(room: "r") == "first")
        }
    }

    @Test func aDatabaseOfANewerSchemaIsRefused() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-schema-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let database = try DatabaseQueue(path: directory + "/rooms.sqlite")
        try await database.write { try $0.execute(sql: "PRAGMA user_version = 99") }
        try database.close()
        #expect {
            try RoomLog(directory: directory, sync: .normal)
        } throws: { error in
            "\(error)".contains("schema version 99")
        }
    }
}
