public import LockstepStorage
import PostgresNIO

/// The locked write: the row of a room in `rooms` orders every server's commits of that room.
extension PostgresRoomStorage {
    public func write(
        room: String, after version: Int, sessions: [String],
        prepare: @escaping @Sendable (RoomCatchUp) async -> RoomWrite
    ) async throws(StorageError) {
        let keepHistory = configuration.keepHistory
        let idleLimit = Int(configuration.operationTimeout * 2 / .milliseconds(1))
        try await bounded("write room \(room)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                // A server that stalls with the room locked releases it instead of holding every other server back.
                try await connection.query(
                    "SELECT set_config('idle_in_transaction_session_timeout', \(String(idleLimit)), true)",
                    logger: logger)
                try await connection.query(
                    "INSERT INTO rooms (room) VALUES (\(room)) ON CONFLICT (room) DO NOTHING", logger: logger)
                var locked = 0
                var epoch: String?
                for try await (stored, storedEpoch) in try await connection.query(
                    "SELECT version, epoch FROM rooms WHERE room = \(room) FOR UPDATE", logger: logger
                ).decode((Int, String?).self) {
                    locked = stored
                    epoch = storedEpoch
                }
                let missed = try await Self.changes(connection, room: room, after: version, logger)
                var marks: [StoredMark] = []
                if !sessions.isEmpty {
                    for try await (session, seq, time) in try await connection.query(
                        """
                        SELECT session, seq, time FROM session_marks WHERE room = \(room) AND session = ANY(\(sessions))
                        """, logger: logger
                    ).decode((String, Int, Double).self) {
                        marks.append(StoredMark(room: room, session: session, seq: seq, time: time))
                    }
                }
                let write = await prepare(RoomCatchUp(missed: missed, marks: marks, epoch: epoch))
                for (offset, change) in write.changes.enumerated()
                where change.room != room || change.version != locked + 1 + offset {
                    throw StorageError.database(
                        "room \(room) is at version \(locked), so its next change is \(locked + 1 + offset), "
                            + "not \(change.room) version \(change.version); nothing was stored")
                }
                try await store(write, keepHistory: keepHistory, connection)
                if let last = write.changes.last?.version {
                    try await connection.query(
                        "UPDATE rooms SET version = \(last) WHERE room = \(room)", logger: logger)
                    try await notify(.committed(room: room, version: last), connection)
                }
                // Past the deadline the caller has been told the write failed: roll back rather than commit.
                try Task.checkCancellation()
            }
        }
    }

    /// Announces `event` to the other servers when the transaction open on `connection` commits.
    func notify(_ event: StorageEvent, _ connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_notify(\(Self.channel), \(Notice(event, node: node).payload))",
            logger: logger)
    }
}
