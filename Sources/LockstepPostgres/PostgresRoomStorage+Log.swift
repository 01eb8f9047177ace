import Foundation
public import LockstepStorage
import PostgresNIO

/// The ``RoomStorage`` methods: the same meaning as `RoomLog`'s, each one bounded call.
extension PostgresRoomStorage {
    public func append(
        changes: [StoredChange], snapshots: [StoredSnapshot], sessions: SessionWrites, keepHistory: Int
    ) async throws(StorageError) {
        try await bounded("append to the log") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await store(
                    RoomWrite(changes: changes, snapshots: snapshots, sessions: sessions), keepHistory: keepHistory,
                    connection)
                for (room, last) in Dictionary(changes.map { ($0.room, $0.version) }, uniquingKeysWith: max) {
                    try await connection.query(
                        """
                        INSERT INTO rooms (room, version) VALUES (\(room), \(last))
                        ON CONFLICT (room) DO UPDATE SET version = GREATEST(rooms.version, excluded.version)
                        """, logger: logger)
                }
            }
        }
    }

    public func load(room: String) async throws(StorageError) -> StoredRoom? {
        try await bounded("load room \(room)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                // One view of the database: another server's snapshot deletes the changes it covers, and read between
                // this snapshot and its changes, that would leave a gap.
                try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
                return try await Self.load(room: room, connection, logger)
            }
        }
    }

    /// The latest snapshot of `room` and every change after it, read on `connection`; nil for a room never stored.
    /// Without `stateVersions` (a schema from before them) every snapshot is of state version 1.
    static func load(
        room: String, _ connection: PostgresConnection, stateVersions: Bool = true, _ logger: Logger
    ) async throws -> StoredRoom? {
        var snapshot: StoredSnapshot?
        let query: PostgresQuery =
            stateVersions
            ? """
            SELECT version, state, history, state_version FROM snapshots WHERE room = \(room)
            ORDER BY version DESC LIMIT 1
            """
            : """
            SELECT version, state, history, 1::bigint FROM snapshots WHERE room = \(room)
            ORDER BY version DESC LIMIT 1
            """
        for (version, state, history, stateVersion) in try await connection.rows(
            query, decoding: (Int, ByteBuffer, ByteBuffer, Int).self, logger: logger)
        {
            snapshot = StoredSnapshot(
                room: room, version: version, state: state.bytes, history: history.bytes, stateVersion: stateVersion)
        }
        let changes = try await changes(connection, room: room, after: snapshot?.version ?? 0, logger)
        if snapshot == nil && changes.isEmpty { return nil }
        return StoredRoom(snapshot: snapshot, changes: changes)
    }

    public func changes(
        room: String, after version: Int, through last: Int, limit: Int
    ) async throws(StorageError) -> [StoredChange] {
        try await bounded("read room \(room)") { [self] in
            try await client.withConnection { connection in
                try await Self.changes(connection, room: room, after: version, through: last, limit: limit, logger)
            }
        }
    }

    public func oldestChange(room: String) async throws(StorageError) -> Int? {
        try await bounded("read room \(room)") { [self] in
            for oldest in try await client.rows(
                "SELECT MIN(version) FROM changes WHERE room = \(room)", decoding: Int?.self, logger: logger)
            {
                return oldest
            }
            return nil
        }
    }

    /// Forgets `room`'s changes from `version` on, and moves its version back to before them.
    public func truncate(room: String, from version: Int) async throws(StorageError) {
        try await bounded("truncate room \(room)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    "DELETE FROM changes WHERE room = \(room) AND version >= \(version)", logger: logger)
                try await connection.query(
                    "UPDATE rooms SET version = LEAST(version, \(version - 1)) WHERE room = \(room)", logger: logger)
            }
        }
    }

    public func marks(room: String) async throws(StorageError) -> [StoredMark] {
        try await bounded("read the sessions of room \(room)") { [self] in
            var marks: [StoredMark] = []
            for (session, seq, time, answer) in try await client.rows(
                "SELECT session, seq, time, answer FROM session_marks WHERE room = \(room)",
                decoding: (String, Int, Double, String?).self, logger: logger)
            {
                marks.append(StoredMark(room: room, session: session, seq: seq, time: time, stored: answer))
            }
            return marks
        }
    }

    public func mark(room: String, session: String) async throws(StorageError) -> StoredMark? {
        try await bounded("read a session of room \(room)") { [self] in
            for (seq, time, answer) in try await client.rows(
                "SELECT seq, time, answer FROM session_marks WHERE room = \(room) AND session = \(session)",
                decoding: (Int, Double, String?).self, logger: logger)
            {
                return StoredMark(room: room, session: session, seq: seq, time: time, stored: answer)
            }
            return nil
        }
    }

    public func epoch(room: String) async throws(StorageError) -> String? {
        try await bounded("read the epoch of room \(room)") { [self] in
            for epoch in try await client.rows(
                "SELECT epoch FROM rooms WHERE room = \(room)", decoding: String?.self, logger: logger)
            {
                return epoch
            }
            return nil
        }
    }

    /// Stores `write` in the transaction open on `connection`: marks and epochs, changes, then snapshots, each
    /// snapshot dropping older snapshots and the changes more than `keepHistory` versions before it.
    func store(_ write: RoomWrite, keepHistory: Int, _ connection: PostgresConnection) async throws {
        let now = Date.now.timeIntervalSince1970
        for (room, epoch) in write.sessions.epochs {
            try await connection.query(
                """
                INSERT INTO rooms (room, epoch) VALUES (\(room), \(epoch))
                ON CONFLICT (room) DO UPDATE SET epoch = COALESCE(rooms.epoch, excluded.epoch)
                """, logger: logger)
        }
        try await storeMarks(write.sessions, now: now, connection)
        try await storeTimers(write.sessions, connection)
        for change in write.changes {
            try await connection.query(
                """
                INSERT INTO changes (room, version, message, inverse)
                VALUES (\(change.room), \(change.version), \(ByteBuffer(bytes: change.message)),
                    \(ByteBuffer(bytes: change.record)))
                ON CONFLICT (room, version) DO UPDATE SET message = excluded.message, inverse = excluded.inverse,
                    time = excluded.time
                """, logger: logger)
        }
        for snapshot in write.snapshots {
            // One statement: none of its parts reads a row another writes.
            try await connection.query(
                """
                WITH new_snapshot AS (
                    INSERT INTO snapshots (room, version, state, history, state_version)
                    VALUES (\(snapshot.room), \(snapshot.version), \(ByteBuffer(bytes: snapshot.state)),
                        \(ByteBuffer(bytes: snapshot.history)), \(snapshot.stateVersion))
                    ON CONFLICT (room, version) DO UPDATE SET state = excluded.state, history = excluded.history,
                        time = excluded.time, state_version = excluded.state_version
                ), old_snapshots AS (
                    DELETE FROM snapshots WHERE room = \(snapshot.room) AND version < \(snapshot.version)
                )
                DELETE FROM changes WHERE room = \(snapshot.room) AND version <= \(snapshot.version - keepHistory)
                """, logger: logger)
        }
    }

    /// A later mark of a session replaces an earlier one (never moving its seq down); then idle marks, and the least
    /// recently moved past the limit, are deleted.
    private func storeMarks(_ sessions: SessionWrites, now: Double, _ connection: PostgresConnection) async throws {
        var rooms = Set<String>()
        for mark in sessions.marks {
            rooms.insert(mark.room)
            try await connection.query(
                """
                INSERT INTO session_marks (room, session, seq, time, answer) VALUES (\(mark.room), \(mark.session),
                    \(mark.seq), \(mark.time), \(mark.storedColumn))
                ON CONFLICT (room, session) DO UPDATE
                    SET seq = GREATEST(session_marks.seq, excluded.seq), time = excluded.time,
                        answer = COALESCE(excluded.answer, session_marks.answer)
                """, logger: logger)
        }
        for room in rooms.sorted() { try await pruneMarks(of: room, now: now, sessions: sessions, connection) }
    }

    /// Deletes `room`'s idle marks, and the least recently moved past the limit.
    func pruneMarks(
        of room: String, now: Double, sessions: SessionWrites, _ connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            DELETE FROM session_marks WHERE room = \(room) AND (time < \(sessions.idleBefore(now: now)) OR session NOT IN (
                SELECT session FROM session_marks WHERE room = \(room) ORDER BY time DESC, session
                LIMIT \(sessions.limit)))
            """, logger: logger)
    }

    static func changes(
        _ connection: PostgresConnection, room: String, after version: Int, through last: Int = .max,
        limit: Int = .max, _ logger: Logger
    ) async throws -> [StoredChange] {
        var changes: [StoredChange] = []
        for (version, message, inverse) in try await connection.rows(
            """
            SELECT version, message, inverse FROM changes WHERE room = \(room) AND version > \(version)
                AND version <= \(last)
            ORDER BY version LIMIT \(limit)
            """, decoding: (Int, ByteBuffer, ByteBuffer).self, logger: logger)
        {
            changes.append(StoredChange(room: room, version: version, message: message.bytes, record: inverse.bytes))
        }
        return changes
    }
}

extension ByteBuffer {
    /// The readable bytes.
    var bytes: [UInt8] { Array(readableBytesView) }
}
