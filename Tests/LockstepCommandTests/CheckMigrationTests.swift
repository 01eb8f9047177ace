import Foundation
@testable import LockstepCommand
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepSQLite
import LockstepStorage
import Testing

/// `check` for a custom app, as `LockstepCommand.main(apps:)` runs it: rooms stored before the todos state had
/// `nextId` (a real SQLite file), checked with a version 2 that migrates them, and with one whose migration forgets it.
/// A room a server would migrate counts as loading, and the check writes no migration back.
@Suite struct CheckMigrationTests {
    static let migrating = App(
        "todos", summary: "todos with nextId", reducer: Todos(), stateVersion: 2,
        migrations: [Migration(from: 1) { state in try state.setMember("nextId", to: 2) }])
    static let careless = App(
        "todos", summary: "todos, a careless version 2", reducer: Todos(), stateVersion: 2,
        migrations: [Migration(from: 1) { _ in }])

    @Test func aRoomThatMigratesLoadsAndNothingIsWrittenBack() async throws {
        try await withStoredRoom { directory in
            let before = try Self.files(in: directory)
            let rooms = try await Check.check(directory: directory, app: Self.migrating)
            #expect(rooms.map(\.room) == ["groceries"])
            #expect(rooms[0].failure == nil && rooms[0].migratedFrom == 1 && rooms[0].version == 0)
            #expect(
                Check.summary(of: rooms, app: Self.migrating)
                    == "1 room checked with the app todos (state version 2): every room loads; 1 of those that load "
                    + "would be migrated from an older state version")
            #expect(try Self.files(in: directory) == before, "the migration was written back")
        }
    }

    @Test func aMigrationThatForgetsAFieldFails() async throws {
        try await withStoredRoom { directory in
            let rooms = try await Check.check(directory: directory, app: Self.careless)
            let failure = try #require(rooms.first?.failure)
            #expect(failure.contains(#"missing field "nextId""#), "\(failure)")
            #expect(rooms[0].line?.hasPrefix("room groceries (version 0) cannot be loaded: ") == true)
            #expect(Check.summary(of: rooms, app: Self.careless).hasSuffix(": 1 room cannot be loaded"))
        }
    }

    /// A data directory holding `groceries`: its state stored at version 0 in state version 1, without `nextId`.
    private func withStoredRoom(_ body: (String) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "lockstep-check-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try RoomLog(directory: directory, sync: .normal, app: "todos")
        let state: JSON = ["items": [["id": 1, "title": "milk", "done": false]]]
        try await log.append(
            changes: [],
            snapshots: [
                StoredSnapshot(
                    room: "groceries", version: 0, state: state.serialized(),
                    history: HistoryCoding.encode(History(depth: 10)), stateVersion: 1)
            ],
            sessions: SessionWrites(idleSeconds: 3_600, limit: 10), keepHistory: 10)
        log.close()
        try await body(directory)
    }

    /// Every file of `directory` by name, with its bytes.
    static func files(in directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return files
    }
}
