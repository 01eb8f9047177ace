public import LockstepStorage
public import Logging
import PostgresNIO

/// Reading every stored room without a server and without writing, as `lockstep check --postgres` does.
extension PostgresRoomStorage {
    /// Reads every room stored in the database at `url`, in name order, and returns what `inspect` makes of each:
    /// its latest snapshot and the changes after it, as a server loads them.
    ///
    /// Nothing is written: no schema is created or migrated, no node number is taken and no peer is published. All
    /// of it is read on one connection in one read-only transaction, so the rooms are seen as of one moment, and it
    /// may run beside servers using the database.
    ///
    /// - Parameters:
    ///   - url: The database, as `lockstep serve --postgres` takes it.
    ///   - app: The app whose rooms the database must hold; another app's throw `StorageError.appMismatch`.
    ///   - timeout: The longest connecting, or reading one room, may take before the read fails as unavailable.
    ///   - logger: Where the database driver logs.
    ///   - inspect: Called with each room's name and what is stored of it.
    /// - Returns: What `inspect` returned for each room, in name order.
    public static func readRooms<Outcome: Sendable>(
        url: String, app: String, timeout: Duration = .seconds(5), logger: Logger,
        _ inspect: @escaping @Sendable (_ room: String, _ stored: StoredRoom) -> Outcome
    ) async throws(StorageError) -> [Outcome] {
        let location = try PostgresLocation(url: url)
        var configuration = try location.connectionConfiguration
        configuration.options.connectTimeout = .milliseconds(Int64(timeout / .milliseconds(1)))
        let connecting = configuration
        let connection = try await step("connect to \(location)", timeout) {
            try await PostgresConnection.connect(configuration: connecting, id: 1, logger: logger)
        }
        do throws(StorageError) {
            let outcomes = try await readRooms(on: connection, app: app, timeout: timeout, logger: logger, inspect)
            try? await connection.close()
            return outcomes
        } catch {
            try? await connection.close()
            throw error
        }
    }

    private static func readRooms<Outcome: Sendable>(
        on connection: PostgresConnection, app: String, timeout: Duration, logger: Logger,
        _ inspect: @escaping @Sendable (String, StoredRoom) -> Outcome
    ) async throws(StorageError) -> [Outcome] {
        let (rooms, stateVersions) = try await step("list the rooms", timeout) {
            try await connection.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            let schema = try await readableSchema(connection, app: app, logger: logger)
            var rooms: [String] = []
            for room in try await connection.rows(
                """
                SELECT room FROM (SELECT room FROM snapshots UNION SELECT room FROM changes) AS stored
                ORDER BY room COLLATE "C"
                """, decoding: String.self, logger: logger)
            {
                rooms.append(room)
            }
            return (rooms, schema >= 2)
        }
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(rooms.count)
        for room in rooms {
            let stored = try await step("read room \(room)", timeout) {
                try await load(room: room, connection, stateVersions: stateVersions, logger)
            }
            if let stored { outcomes.append(inspect(room, stored)) }
        }
        _ = try? await step("end the read", timeout) { try await connection.query("ROLLBACK", logger: logger) }
        return outcomes
    }

    /// The database's schema version, once it is known that this code can read it and that it holds `app`'s rooms.
    private static func readableSchema(
        _ connection: PostgresConnection, app: String, logger: Logger
    ) async throws -> Int {
        for exists in try await connection.rows(
            "SELECT to_regclass('lockstep_meta') IS NOT NULL", decoding: Bool.self, logger: logger) where !exists
        {
            throw StorageError.database("the database holds no lockstep rooms: it has no lockstep_meta table")
        }
        var meta: [String: String] = [:]
        for (key, value) in try await connection.rows(
            "SELECT key, value FROM lockstep_meta", decoding: (String, String).self, logger: logger)
        {
            meta[key] = value
        }
        let version = meta["schema_version"].flatMap { Int($0) } ?? 0
        guard version <= schemaVersion else {
            throw StorageError.database(
                "the database has schema version \(version), newer than this lockstep's \(schemaVersion); "
                    + "run a newer lockstep")
        }
        if let stored = meta["app"], stored != app { throw StorageError.appMismatch(stored: stored, running: app) }
        return version
    }

    /// Runs `operation` within `timeout`; a failure as the `StorageError` it means.
    private static func step<T: Sendable>(
        _ what: String, _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T
    ) async throws(StorageError) -> T {
        switch await Deadline.race(timeout, operation) {
        case .success(let value): return value
        case .failure(let error): throw describe(error, while: what, timeout: timeout).error
        }
    }
}
