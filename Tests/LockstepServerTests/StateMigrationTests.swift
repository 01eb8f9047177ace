import Foundation
import InMemoryLogging
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepSQLite
import LockstepStorage
import LockstepTestSupport
import LockstepTesting
import Logging
import Testing

/// Rooms stored by version 1 of an app, loaded by version 2 whose state has another shape (a real SQLite file).
@Suite(.timeLimit(.minutes(3))) struct StateMigrationTests {
    /// With a snapshot (every 2 changes) and without one (the log alone, replayed onto the initial state).
    @Test(arguments: [1_000, 2]) func aRoomStoredUnderVersion1LoadsUnderVersion2(snapshotInterval: Int) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let epoch = try await withStoredServer(
            in: directory, app: Shelf.v1, configure: { $0.snapshotInterval = snapshotInterval }
        ) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            let epoch = try #require(try await client.nextJSON(type: "snapshot")["epoch"]?.stringValue)
            for title in ["Dune", "Emma", "Ulysses"] { client.send(.action(id: title, action: Shelf.add(title))) }
            try await client.catchUp(to: 3)
            return epoch
        }
        let migratedEpoch = try await withStoredServer(in: directory, app: Shelf.v2) { server in
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["version"] == 3)
            #expect(room["state"] == Shelf.migrated(["Dune", "Emma", "Ulysses"]))
            // A client of version 1 resuming where it was gets the new shape, not an empty resume.
            let client = try await TestClient.connect(server, query: "since=3&epoch=\(epoch)", using: sharedTransport)
            let snapshot = try await client.nextJSON(type: "snapshot")
            #expect(snapshot["state"] == Shelf.migrated(["Dune", "Emma", "Ulysses"]))
            let migratedEpoch = try #require(snapshot["epoch"]?.stringValue)
            #expect(migratedEpoch != epoch)
            #expect(snapshot["undo"] == 0, "the undo history of the older shape is not kept")
            client.send(.action(id: "r", action: ["markRead": ["index": 1]]))
            _ = try await client.next { $0 == .ack(id: "r", version: 4) }
            return migratedEpoch
        }
        try await withStoredServer(in: directory, app: Shelf.v2) { server in
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["version"] == 4)
            #expect(room["state"] == Shelf.migrated(["Dune", "Emma", "Ulysses"], read: [1]))
            #expect(room["epoch"]?.stringValue == migratedEpoch, "the migration ran once and was stored")
        }
    }

    @Test func aRoomMadeUnderVersion2ReloadsWithoutMigrating() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let epoch = try await withStoredServer(in: directory, app: Shelf.v2) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            let epoch = try #require(try await client.nextJSON(type: "snapshot")["epoch"]?.stringValue)
            client.send(.action(id: "a", action: Shelf.add("Dune")))
            _ = try await client.next { $0 == .ack(id: "a", version: 1) }
            return epoch
        }
        try await withStoredServer(in: directory, app: Shelf.v2) { server in
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["state"] == Shelf.migrated(["Dune"]))
            #expect(room["epoch"]?.stringValue == epoch)
            let log = try await HTTPGet(port: server.port, path: "/rooms/test/log?after=0")
            #expect(try Recording(ndjson: log.body).stateVersion == 2)
        }
    }

    @Test func aStateThatCannotBeMigratedIsRefusedAndKept() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, app: Shelf.v1) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            for title in ["Dune", "Emma"] { client.send(.action(id: title, action: Shelf.add(title))) }
            try await client.catchUp(to: 2)
        }
        let handler = InMemoryLogHandler()
        var configuration = ServerConfiguration(app: Shelf.careless)
        configuration.port = 0
        let server = try SyncServer(
            configuration: configuration, storage: try storage(in: directory, app: Shelf.careless),
            logger: Logger(label: "test") { _ in handler })
        do {
            defer { server.shutdown() }
            let client = try await TestClient.connect(server, using: sharedTransport)
            let error = try await client.nextJSON(type: "error")
            #expect(error["code"] == "unavailable")
            #expect(error["message"]?.stringValue?.contains("room test is stored in a shape") == true)
            #expect(await client.closeCode() == 1011)
            let read = try await HTTPGet(port: server.port, path: "/rooms/test")
            #expect(read.status == 503)
            #expect(read.text.contains("room test (version 2) cannot be loaded"))
            #expect(read.text.contains(#"missing field "name" at /books/0"#))
            let logged = try #require(handler.entries.first { $0.message == "cannot load a room" })
            #expect(logged.level == .error)
            #expect("\(logged.metadata["error"] ?? "")".contains("state version 2"))
        }
        try await withStoredServer(in: directory, app: Shelf.v2) { server in
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["version"] == 2)
            #expect(room["state"] == Shelf.migrated(["Dune", "Emma"]))
        }
    }

    /// A `State` changed without raising the state version: the room is refused, saying what to do.
    @Test func aChangedStateWithoutAMigrationIsToldToAddOne() async throws {
        try await expectRefusal(
            of: Shelf.v1, by: Shelf.forgetful,
            saying: [
                "room test (version 1) cannot be loaded: it does not decode as the app's State", "add a migration",
            ])
    }

    /// Going back to an older version of the app: rooms the newer one stored are refused, not misread.
    @Test func aRoomStoredByANewerVersionIsRefusedByAnOlderOne() async throws {
        try await expectRefusal(
            of: Shelf.v2, by: Shelf.v1,
            saying: ["stored in state version 2, newer than this app's 1; run the newer server"])
    }

    /// A room with one book stored by `writer` is refused by `reader` with 503 and `words`, and loads, intact, under
    /// version 2 afterwards.
    private func expectRefusal(of writer: App, by reader: App, saying words: [String]) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, app: writer) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            client.send(.action(id: "a", action: Shelf.add("Dune")))
            try await client.catchUp(to: 1)
        }
        try await withStoredServer(in: directory, app: reader) { server in
            let read = try await HTTPGet(port: server.port, path: "/rooms/test")
            #expect(read.status == 503)
            for text in words { #expect(read.text.contains(text), "\(read.text)") }
        }
        try await withStoredServer(in: directory, app: Shelf.v2) { server in
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["state"] == Shelf.migrated(["Dune"]))
        }
    }

    @Test func aVersion1RecordingReplaysIntoVersion2() async throws {
        let bytes = try await withServer(app: Shelf.v1) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            for title in ["Dune", "Emma"] { client.send(.action(id: title, action: Shelf.add(title))) }
            try await client.catchUp(to: 2)
            return try await HTTPGet(port: server.port, path: "/rooms/test/log?after=0").body
        }
        let recording = try Recording(ndjson: bytes)
        #expect(recording.stateVersion == 1)
        let migrated = try recording.migrated(by: Shelf.v2.evolution)
        #expect(migrated.state == Shelf.migrated([]))
        #expect(
            migrated.steps.map(\.ops) == [
                JSONPatch([.add(path: try JSONPointer("/books/0"), value: ["name": "Dune", "read": false])]),
                JSONPatch([.add(path: try JSONPointer("/books/1"), value: ["name": "Emma", "read": false])]),
            ])
        #expect(RecordingReplay(Shelf.V2(), stateVersion: 2, migrations: Shelf.migrations).check(recording) == nil)
    }

    @Test func aServerRefusesTheDataDirectoryOfAnotherApp() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, app: Shelf.v1) { _ in }
        var configuration = ServerConfiguration(app: .counter)
        configuration.port = 0
        let refusal = ServerError.otherAppsDataDirectory(path: directory, stored: "shelf", running: "counter")
        #expect(throws: refusal) {
            _ = try SyncServer(configuration: configuration, storage: try storage(in: directory, app: .counter))
        }
        #expect("\(refusal)".contains("holds rooms of the app shelf, not counter"))
        // The same app, at a newer state version, is welcome.
        try await withStoredServer(in: directory, app: Shelf.v2) { _ in }
    }

    @Test func aDataDirectoryFromBeforeTheMarkerIsAdopted() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try RoomLog(directory: directory, sync: .normal).close()
        try await withStoredServer(in: directory, app: .todos) { _ in }
        var configuration = ServerConfiguration(app: .counter)
        configuration.port = 0
        #expect(throws: ServerError.otherAppsDataDirectory(path: directory, stored: "todos", running: "counter")) {
            _ = try SyncServer(configuration: configuration, storage: try storage(in: directory, app: .counter))
        }
    }
}

/// A required field added to `State` without a migration: a young room (no snapshot of its own yet) is refused like
/// an old one, since every room is read from its stored initial state, not replayed onto the new app's.
@Suite(.timeLimit(.minutes(2))) struct YoungRoomMigrationTests {
    /// Version 1 with an `owner` the developer added without a migration or a new state version.
    struct Owned: Reducer {
        struct State: Codable, Equatable, Sendable {
            var books: [Shelf.V1.Book] = []
            var owner = "nobody"
        }
        typealias Action = Shelf.V1.Action

        var initialState: State { State() }

        func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
            switch action {
            case .add(let title): state.books.append(Shelf.V1.Book(title: title))
            }
            return .none
        }
    }

    @Test(arguments: [false, true]) func aFieldAddedWithoutAMigrationFailsAlikeForYoungAndOldRooms(
        snapshotted: Bool
    ) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(
            in: directory, app: Shelf.v1, configure: { $0.snapshotInterval = snapshotted ? 1 : 1_000 }
        ) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            client.send(.action(id: "a", action: Shelf.add("Dune")))
            try await client.catchUp(to: 1)
        }
        let owned = App("shelf", summary: "books with an owner, no migration", reducer: Owned())
        try await withStoredServer(in: directory, app: owned) { server in
            let read = try await HTTPGet(port: server.port, path: "/rooms/test")
            #expect(read.status == 503, "\(read.text)")
            #expect(read.text.contains("add a migration"))
        }
    }
}
