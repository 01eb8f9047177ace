public import LockstepStorage
import PostgresNIO

/// Pending timers, in the same transactions as the changes: a timer that fires is deleted in the write that stores
/// its change, under the room's lock, so whichever server fires it, it fires once.
extension PostgresRoomStorage {
    /// Stores the timers `sessions` schedules and deletes those gone, in the transaction open on `connection`.
    func storeTimers(_ sessions: SessionWrites, _ connection: PostgresConnection) async throws {
        for timer in sessions.timers {
            try await connection.query(
                """
                INSERT INTO timers (room, name, due, ord, request)
                VALUES (\(timer.room), \(timer.name), \(timer.due), \(timer.order), \(ByteBuffer(bytes: timer.request)))
                ON CONFLICT (room, name) DO UPDATE SET due = excluded.due, ord = excluded.ord, request = excluded.request
                """, logger: logger)
        }
        for key in sessions.timersGone {
            try await connection.query(
                "DELETE FROM timers WHERE room = \(key.room) AND name = \(key.name)", logger: logger)
        }
    }

    public func timers(dueBy due: Int) async throws(StorageError) -> [StoredTimer] {
        try await bounded("read the timers due") { [self] in
            try await readTimers(
                "SELECT room, name, due, ord, request FROM timers WHERE due <= \(due) ORDER BY due, ord")
        }
    }

    public func timers(room: String) async throws(StorageError) -> [StoredTimer] {
        try await bounded("read the timers of room \(room)") { [self] in
            try await readTimers(
                "SELECT room, name, due, ord, request FROM timers WHERE room = \(room) ORDER BY due, ord")
        }
    }

    private func readTimers(_ query: PostgresQuery) async throws -> [StoredTimer] {
        var timers: [StoredTimer] = []
        for (room, name, due, order, request) in try await client.rows(
            query, decoding: (String, String, Int, Int, ByteBuffer).self, logger: logger)
        {
            timers.append(
                StoredTimer(room: room, name: name, due: due, order: order, request: Array(request.readableBytesView)))
        }
        return timers
    }
}
