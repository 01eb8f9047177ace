import LockstepStorage
import PostgresNIO

/// The tables, created and migrated when a server starts.
extension PostgresRoomStorage {
    /// The schema this code writes, kept in `lockstep_meta` under `schema_version`.
    static let schemaVersion = 3
    /// The key of the advisory lock that makes servers starting together migrate one after the other.
    private static let migrationLock = 0x6C6F_636B_7374_6570 as Int

    /// Each step brings the schema from its index to the next version.
    private static let migrations: [[PostgresQuery]] = [
        [
            """
            CREATE TABLE IF NOT EXISTS rooms (
                room text PRIMARY KEY, version bigint NOT NULL DEFAULT 0, epoch text
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS changes (
                room text NOT NULL, version bigint NOT NULL, message bytea NOT NULL, inverse bytea NOT NULL,
                time timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (room, version)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS snapshots (
                room text NOT NULL, version bigint NOT NULL, state bytea NOT NULL, history bytea NOT NULL,
                time timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (room, version)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS session_marks (
                room text NOT NULL, session text NOT NULL, seq bigint NOT NULL, time double precision NOT NULL,
                PRIMARY KEY (room, session)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS peers (
                node bigint NOT NULL, room text NOT NULL, peers bytea NOT NULL, expires timestamptz NOT NULL,
                PRIMARY KEY (node, room)
            )
            """,
            "CREATE SEQUENCE IF NOT EXISTS lockstep_nodes",
        ],
        // The app's state version each snapshot is written in; those from before are version 1.
        ["ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS state_version bigint NOT NULL DEFAULT 1"],
        // The first answer of a request with an idempotency key, kept in the key's mark; pending timers.
        [
            "ALTER TABLE session_marks ADD COLUMN IF NOT EXISTS answer text",
            """
            CREATE TABLE IF NOT EXISTS timers (
                room text NOT NULL, name text NOT NULL, due bigint NOT NULL, ord bigint NOT NULL,
                request bytea NOT NULL, PRIMARY KEY (room, name)
            )
            """,
            "CREATE INDEX IF NOT EXISTS timers_due ON timers (due, ord)",
        ],
    ]

    /// Creates or migrates the schema under an advisory lock; refuses a newer schema or another app's database.
    static func migrate(_ client: PostgresClient, app: String, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS lockstep_meta (key text PRIMARY KEY, value text NOT NULL)", logger: logger)
            var meta: [String: String] = [:]
            for (key, value) in try await connection.rows(
                "SELECT key, value FROM lockstep_meta", decoding: (String, String).self, logger: logger)
            {
                meta[key] = value
            }
            let version = meta["schema_version"].flatMap { Int($0) } ?? 0
            guard version <= schemaVersion else {
                throw StorageError.database(
                    "the database has schema version \(version), newer than this server's \(schemaVersion); "
                        + "run a newer lockstep")
            }
            if let stored = meta["app"], stored != app { throw StorageError.appMismatch(stored: stored, running: app) }
            for step in migrations[version...] {
                for statement in step { try await connection.query(statement, logger: logger) }
            }
            try await connection.query(
                """
                INSERT INTO lockstep_meta (key, value) VALUES ('schema_version', \(String(schemaVersion))),
                    ('app', \(app))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, logger: logger)
            if version < schemaVersion {
                logger.info("PostgreSQL schema migrated", metadata: ["from": "\(version)", "to": "\(schemaVersion)"])
            }
        }
    }
}
