import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepSQLite
import LockstepStorage
import LockstepTestSupport
import Testing

/// `lockstep check` (the real executable) on rooms an older version of the todos app stored, one whose `State` had no
/// `nextId`: today's todos app requires it and has no migration for it. Real SQLite files and a real PostgreSQL.
@Suite(.timeLimit(.minutes(3))) struct CheckCommandTests {
    /// Todos before `nextId`: an item's id was one more than the number of items.
    struct TodosWithoutNextID: Reducer {
        struct State: Codable, Equatable, Sendable { var items: [Todos.Item] = [] }
        enum Action: Codable, Sendable { case add(title: String) }

        var initialState: State { State() }

        func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
            switch action {
            case .add(let title): state.items.append(Todos.Item(id: state.items.count + 1, title: title))
            }
            return .none
        }
    }

    static let older = App("todos", summary: "todos before nextId", reducer: TodosWithoutNextID())

    /// Stores `young` (one change: only its initial state is stored) and `snapshotted` (three changes, a snapshot at
    /// version 2) through a real server running `app`.
    static func storeRooms(on server: SyncServer, adding action: (String) -> JSON) async throws {
        for (room, count) in [("young", 1), ("snapshotted", 3)] {
            let client = try await TestClient.connect(server, room: room, using: sharedTransport)
            for index in 1...count { client.send(.action(id: "a\(index)", action: action("item \(index)"))) }
            try await client.catchUp(to: count)
        }
    }

    static func add(_ title: String) -> JSON { ["add": ["title": .string(title)]] }

    @Test func aFieldAddedWithoutAMigrationListsEveryRoomAndWritesNothing() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, app: Self.older, configure: { $0.snapshotInterval = 2 }) { server in
            try await Self.storeRooms(on: server, adding: Self.add)
        }
        let before = try Self.files(in: directory)
        #expect(before.keys.contains("rooms.sqlite"))

        let run = try await Launched.run(["check", "--data", directory, "--app", "todos"], environment: [:])
        #expect(run.status == 1, "\(run.output)")
        let reasons = Self.reasons(in: run.output)
        #expect(Set(reasons.keys) == ["young", "snapshotted"], "\(run.output)")
        #expect(reasons["young"]?.contains(#"missing field "nextId""#) == true, "\(run.output)")
        #expect(reasons["young"]?.contains("add a migration") == true, "\(run.output)")
        // The young room (its initial state stored, one change replayed onto it) fails as the snapshotted one does.
        #expect(reasons["young"] == reasons["snapshotted"], "\(run.output)")
        #expect(run.output.contains("room young (version 1) cannot be loaded"), "\(run.output)")
        #expect(run.output.contains("room snapshotted (version 3) cannot be loaded"), "\(run.output)")
        #expect(
            run.output.contains("2 rooms checked with the app todos (state version 1): 2 rooms cannot be loaded"),
            "\(run.output)")

        #expect(try Self.files(in: directory) == before, "check changed the data directory")
        // A server starts on the directory afterwards: the check held no lock beyond its run.
        try await withStoredServer(in: directory, app: Self.older) { server in
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/snapshotted").json)
            #expect(room["version"] == 3)
        }
    }

    @Test func roomsThatLoadPassWithExitStatusZero() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, app: .todos, configure: { $0.snapshotInterval = 2 }) { server in
            try await Self.storeRooms(on: server) { ["type": "add", "title": .string($0)] }
        }
        let before = try Self.files(in: directory)
        let run = try await Launched.run(["check", "--data", directory, "--app", "todos"], environment: [:])
        #expect(run.status == 0, "\(run.output)")
        #expect(
            run.output.trimmingCharacters(in: .whitespacesAndNewlines)
                == "2 rooms checked with the app todos (state version 1): every room loads")
        #expect(try Self.files(in: directory) == before)

        let other = try await Launched.run(["check", "--data", directory, "--app", "counter"], environment: [:])
        #expect(other.status == 2)
        #expect(other.output.contains("holds rooms of the app todos, not counter: check them with --app todos"))
    }

    /// A room whose log has changes and no stored state (as stored before every room kept its initial state) is
    /// replayed onto today's initial state, which has `nextId`: it loads, and the summary says a missing migration
    /// cannot show in it.
    @Test func aRoomWithoutAStoredStateIsNamedInTheSummary() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, app: Self.older) { server in
            let client = try await TestClient.connect(server, room: "model", using: sharedTransport)
            client.send(.action(id: "a", action: Self.add("milk")))
            try await client.catchUp(to: 1)
        }
        let log = try RoomLog(directory: directory, sync: .normal, app: "todos")
        let changes = try await log.changes(room: "model", after: 0)
        try await log.append(
            changes: changes.map {
                StoredChange(room: "legacy", version: $0.version, message: $0.message, record: $0.record)
            },
            snapshots: [], sessions: SessionWrites(idleSeconds: 3_600, limit: 10), keepHistory: 10)
        log.close()

        let run = try await Launched.run(["check", "--data", directory, "--app", "todos"], environment: [:])
        #expect(run.status == 1, "\(run.output)")
        #expect(Set(Self.reasons(in: run.output).keys) == ["model"], "\(run.output)")
        #expect(run.output.contains("2 rooms checked"), "\(run.output)")
        #expect(run.output.contains("1 of those that load has changes but no stored state"), "\(run.output)")
    }

    @Test func aDirectoryInUseIsRefused() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, app: .todos) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            client.send(.action(id: "a", action: ["type": "add", "title": "milk"]))
            try await client.catchUp(to: 1)
            let run = try await Launched.run(["check", "--data", directory, "--app", "todos"], environment: [:])
            #expect(run.status == 2)
            #expect(run.output.contains("a lockstep server is using \(directory): stop it first"), "\(run.output)")
        }
        let missing = try await Launched.run(["check", "--data", directory + "/none"], environment: [:])
        #expect(missing.status == 2)
        #expect(missing.output.contains("there is no data directory at \(directory)/none"), "\(missing.output)")
    }

    /// Each room's reason, from the lines `room NAME (version V) cannot be loaded: REASON`.
    static func reasons(in output: String) -> [String: String] {
        var reasons: [String: String] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("room ") {
            guard let colon = line.range(of: " cannot be loaded: ") else { continue }
            let room = line.dropFirst("room ".count).prefix { $0 != " " }
            reasons[String(room)] = String(line[colon.upperBound...])
        }
        return reasons
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

/// `lockstep check --postgres`: the same rooms in PostgreSQL, read without changing a row.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct CheckCommandPostgresTests {
    @Test func aFieldAddedWithoutAMigrationListsEveryRoomAndChangesNoRow() async throws {
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let server = try await clusterNode(
            on: postgres, app: CheckCommandTests.older, operationTimeout: .seconds(20),
            configure: { $0.snapshotInterval = 2 })
        try await CheckCommandTests.storeRooms(on: server, adding: CheckCommandTests.add)
        server.shutdown()
        // The stopped server withdraws its peers on its own; the rows are compared once it has.
        let deadline = ContinuousClock.now + .seconds(20)
        while try postgres.sql("SELECT count(*) FROM peers") != "0", ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let before = try Self.rows(of: postgres)

        let run = try await Launched.run(["check", "--postgres", postgres.url, "--app", "todos"], environment: [:])
        #expect(run.status == 1, "\(run.output)")
        let reasons = CheckCommandTests.reasons(in: run.output)
        #expect(Set(reasons.keys) == ["young", "snapshotted"], "\(run.output)")
        #expect(reasons["young"]?.contains(#"missing field "nextId""#) == true, "\(run.output)")
        #expect(reasons["young"] == reasons["snapshotted"], "\(run.output)")
        #expect(run.output.contains("2 rooms checked with the app todos"), "\(run.output)")

        #expect(try Self.rows(of: postgres) == before, "check changed the database")

        let other = try await Launched.run(["check", "--postgres", postgres.url, "--app", "counter"], environment: [:])
        #expect(other.status == 2)
        #expect(other.output.contains("holds rooms of the app todos, not counter"), "\(other.output)")
    }

    /// Every row of every table, with its row version (`xmin`: a row rewritten gets a new one), and the node sequence.
    static func rows(of postgres: PostgresServer) throws -> String {
        var dump = ""
        for table in ["lockstep_meta", "rooms", "snapshots", "changes", "session_marks", "peers"] {
            dump += "\(table):\n" + (try postgres.sql("SELECT xmin, * FROM \(table) ORDER BY 2, 3")) + "\n"
        }
        dump += try postgres.sql("SELECT last_value, is_called FROM lockstep_nodes")
        #expect(dump.contains("young") && dump.contains("snapshotted"))
        return dump
    }
}
