import Foundation
import GRDB
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepSQLite
import LockstepStorage
import Testing

/// Rebuilding rooms from a real SQLite log, damaged or not.
@Suite struct RoomReplayTests {
    /// A log in a fresh directory holding `count` counter increments of room "r", as the server writes them.
    private func logWithIncrements(_ count: Int) async throws -> (RoomLog, String) {
        let directory = NSTemporaryDirectory() + "lockstep-replay-\(UUID().uuidString)"
        let log = try RoomLog(directory: directory, sync: .normal)
        var store = Store(reducer: Counter())
        var changes: [StoredChange] = []
        for _ in 0..<count {
            let change = try #require(try store.send(.increment).change)
            let message = ServerMessage.patch(
                version: change.version, ops: change.patch,
                cause: Cause(kind: .action, client: "c1", action: ["type": "increment"]),
                undo: store.history.undoCount, redo: store.history.redoCount
            )
            changes.append(
                StoredChange(
                    room: "r", version: change.version, message: message.serialized(),
                    record: change.inverse.serialized()))
        }
        try await log.append(changes: changes, snapshots: [], sessions: SessionWrites(idleSeconds: .infinity, limit: .max), keepHistory: 10_000)
        return (log, directory)
    }

    @Test func aLogReplaysToTheSameVersionStateAndHistory() async throws {
        let (log, directory) = try await logWithIncrements(5)
        defer { log.close(); try? FileManager.default.removeItem(atPath: directory) }
        let replay = try RoomReplay(try #require(try await log.load(room: "r")), app: .counter, undoDepth: 1000)
        #expect(replay.damagedFrom == nil)
        #expect(replay.store.version == 5)
        #expect(try replay.store.stateJSON() == ["count": 5])
        #expect(replay.store.history.undoCount == 5)
        #expect(try await log.load(room: "other") == nil)
    }

    @Test func aDamagedLastRecordOpensTheRoomAtTheLastGoodVersion() async throws {
        let (log, directory) = try await logWithIncrements(5)
        log.close()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try DatabaseQueue(path: directory + "/rooms.sqlite")
        try await database.write { db in
            try db.execute(
                sql: "UPDATE changes SET message = ? WHERE version = 5", arguments: [Data("{\"type\":\"pat".utf8)])
        }
        try database.close()

        let reopened = try RoomLog(directory: directory, sync: .normal)
        defer { reopened.close() }
        let replay = try RoomReplay(try #require(try await reopened.load(room: "r")), app: .counter, undoDepth: 1000)
        #expect(replay.damagedFrom == 5)
        #expect(replay.store.version == 4)
        #expect(try replay.store.stateJSON() == ["count": 4])
    }

    @Test func snapshotsBoundTheReplayAndCompactionBoundsTheLog() async throws {
        let (log, directory) = try await logWithIncrements(30)
        defer { log.close(); try? FileManager.default.removeItem(atPath: directory) }
        var history = History(depth: 1000)
        let stored = try #require(try await log.load(room: "r"))
        for change in stored.changes {
            guard case .patch(_, let ops, _, _, _) = try ServerMessage(json: JSON(parsing: change.message)) else {
                continue
            }
            try history.replay(
                .action, version: change.version, patch: ops, inverse: change.parsedRecord().inverse)
        }
        let snapshot = StoredSnapshot(
            room: "r", version: 30, state: Array(#"{"count":30}"#.utf8), history: HistoryCoding.encode(history))
        try await log.append(changes: [], snapshots: [snapshot], sessions: SessionWrites(idleSeconds: .infinity, limit: .max), keepHistory: 10)

        let after = try #require(try await log.load(room: "r"))
        #expect(after.snapshot?.version == 30)
        #expect(after.changes.isEmpty)
        #expect(try await log.changes(room: "r", after: 0).map(\.version) == Array(21...30))
        let replay = try RoomReplay(after, app: .counter, undoDepth: 1000)
        #expect(replay.store.version == 30)
        #expect(replay.store.history.undoCount == 30)
    }

    @Test func aSecondLogOnTheSameDirectoryIsRefused() async throws {
        let (log, directory) = try await logWithIncrements(1)
        defer { log.close(); try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: StorageError.directoryInUse(path: directory)) {
            _ = try RoomLog(directory: directory, sync: .full)
        }
    }
}
