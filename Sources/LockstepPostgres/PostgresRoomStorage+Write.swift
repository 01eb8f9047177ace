import Foundation
public import LockstepStorage
import PostgresNIO
import Synchronization

/// The locked write: the row of a room in `rooms` orders every server's commits of that room.
extension PostgresRoomStorage {
    public func write(
        room: String, after version: Int, sessions: [String],
        prepare: @escaping @Sendable (RoomCatchUp) async -> RoomWrite
    ) async throws(StorageError) {
        let gate = CommitGate()
        do {
            try await lockedWrite(room, after: version, sessions: sessions, gate: gate, prepare: prepare)
        } catch {
            // A COMMIT sent may have landed: the caller must not say that nothing was stored.
            guard gate.abandon() else { throw error }
            awaitedCommits.withLock { _ = $0.insert(room) }
            throw .uncertain("write room \(room): \(error)")
        }
    }

    private func lockedWrite(
        _ room: String, after version: Int, sessions: [String], gate: CommitGate,
        prepare: @escaping @Sendable (RoomCatchUp) async -> RoomWrite
    ) async throws(StorageError) {
        let keepHistory = configuration.keepHistory
        let idleLimit = String(Int(configuration.operationTimeout * 2 / .milliseconds(1)))
        try await bounded("write room \(room)") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                // The room's lock; a server that stalls holding it releases it instead of holding every other server
                // back. Its row exists once a client joined (`claim`); the insert covers rooms made before that.
                var locked = try await lock(room, idleLimit: idleLimit, connection)
                if locked == nil {
                    try await connection.query(
                        "INSERT INTO rooms (room) VALUES (\(room)) ON CONFLICT (room) DO NOTHING", logger: logger)
                    locked = try await lock(room, idleLimit: idleLimit, connection)
                }
                guard let (stored, epoch) = locked else { throw StorageError.database("room \(room) has no row") }
                // A statement of its own after the lock: one begun before the wait would not see what the server
                // that held the lock committed.
                let found = try await missedAndMarks(room, after: version, sessions: sessions, connection)
                let write = await prepare(RoomCatchUp(missed: found.missed, marks: found.marks, epoch: epoch))
                for (offset, change) in write.changes.enumerated()
                where change.room != room || change.version != stored + 1 + offset {
                    throw StorageError.database(
                        "room \(room) is at version \(stored), so its next change is \(stored + 1 + offset), "
                            + "not \(change.room) version \(change.version); nothing was stored")
                }
                try await commit(write, room: room, keepHistory: keepHistory, connection)
                // Past the deadline the caller has been told the write failed: roll back rather than commit.
                guard gate.enterCommit() else { throw CancellationError() }
            }
        }
    }

    /// Locks `room`'s row for the transaction; its version and epoch, or nil when it has no row.
    private func lock(
        _ room: String, idleLimit: String, _ connection: PostgresConnection
    ) async throws -> (version: Int, epoch: String?)? {
        for try await (version, epoch, _) in try await connection.query(
            """
            SELECT version, epoch, set_config('idle_in_transaction_session_timeout', \(idleLimit), true)
            FROM rooms WHERE room = \(room) FOR UPDATE
            """, logger: logger
        ).decode((Int, String?, String).self) {
            return (version, epoch)
        }
        return nil
    }

    /// What other servers committed after `version`, and the stored marks of `sessions`, in one round trip.
    private func missedAndMarks(
        _ room: String, after version: Int, sessions: [String], _ connection: PostgresConnection
    ) async throws -> (missed: [StoredChange], marks: [StoredMark]) {
        var missed: [StoredChange] = []
        var marks: [StoredMark] = []
        for try await (number, message, inverse, session, time) in try await connection.query(
            """
            SELECT version, message, inverse, NULL::text, NULL::float8 FROM changes
            WHERE room = \(room) AND version > \(version)
            UNION ALL
            SELECT seq, NULL::bytea, NULL::bytea, session, time FROM session_marks
            WHERE room = \(room) AND session = ANY(\(sessions))
            """, logger: logger
        ).decode((Int, ByteBuffer?, ByteBuffer?, String?, Double?).self) {
            if let session, let time {
                marks.append(StoredMark(room: room, session: session, seq: number, time: time))
            } else if let message, let inverse {
                missed.append(StoredChange(room: room, version: number, message: message.bytes, record: inverse.bytes))
            }
        }
        missed.sort { $0.version < $1.version }
        return (missed, marks)
    }

    /// Stores one room's write in the open transaction: changes, marks, the room's version and the notice to other
    /// servers in one statement; epochs, snapshots and the pruning of marks, when there are any, after it.
    private func commit(
        _ write: RoomWrite, room: String, keepHistory: Int, _ connection: PostgresConnection
    ) async throws {
        let versions = write.changes.map(\.version)
        let messages = write.changes.map { ByteBuffer(bytes: $0.message) }
        let inverses = write.changes.map { ByteBuffer(bytes: $0.record) }
        // One row per session: a statement may not upsert a row twice.
        var latest: [String: StoredMark] = [:]
        for mark in write.sessions.marks where mark.room == room {
            latest[mark.session] = StoredMark(
                room: room, session: mark.session, seq: max(mark.seq, latest[mark.session]?.seq ?? 0), time: mark.time)
        }
        let marks = latest.values.sorted { $0.session < $1.session }
        let last = versions.last ?? 0
        let notice = Notice(.committed(room: room, version: last), node: node).payload
        try await connection.query(
            """
            WITH new_changes AS (
                INSERT INTO changes (room, version, message, inverse)
                SELECT \(room), * FROM unnest(\(versions)::bigint[], \(messages)::bytea[], \(inverses)::bytea[])
                ON CONFLICT (room, version) DO UPDATE
                    SET message = excluded.message, inverse = excluded.inverse, time = excluded.time
            ), new_marks AS (
                INSERT INTO session_marks (room, session, seq, time)
                SELECT \(room), * FROM unnest(
                    \(marks.map(\.session))::text[], \(marks.map(\.seq))::bigint[], \(marks.map(\.time))::float8[])
                ON CONFLICT (room, session) DO UPDATE
                    SET seq = GREATEST(session_marks.seq, excluded.seq), time = excluded.time
            )
            UPDATE rooms SET version = GREATEST(version, \(last)) WHERE room = \(room)
            RETURNING CASE WHEN \(last > 0) THEN pg_notify(\(Self.channel), \(notice))::text END
            """, logger: logger)
        var rest = write
        rest.changes = []
        rest.sessions.marks = []
        try await store(rest, keepHistory: keepHistory, connection)
        if !marks.isEmpty {
            try await pruneMarks(
                of: room, now: Date.now.timeIntervalSince1970, sessions: write.sessions, connection)
        }
    }

    public func claim(room: String, epoch: String) async throws(StorageError) -> String {
        try await bounded("create room \(room)") { [self] in
            // DO UPDATE rather than DO NOTHING: it returns the row a concurrent first claim committed, which a
            // separate SELECT in this statement's snapshot might not see.
            for try await stored in try await client.query(
                """
                INSERT INTO rooms (room, epoch) VALUES (\(room), \(epoch))
                ON CONFLICT (room) DO UPDATE SET epoch = COALESCE(rooms.epoch, excluded.epoch)
                RETURNING epoch
                """, logger: logger
            ).decode(String.self) {
                return stored
            }
            throw StorageError.database("creating room \(room) returned no epoch")
        }
    }

    /// Announces `event` to the other servers when the transaction open on `connection` commits.
    func notify(_ event: StorageEvent, _ connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_notify(\(Self.channel), \(Notice(event, node: node).payload))",
            logger: logger)
    }
}
