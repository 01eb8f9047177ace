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
            switch gate.abandon() {
            case .notSent: throw error
            // Answered just as the deadline passed: everything is stored.
            case .committed: return
            // A COMMIT sent may have landed: the caller must not say that nothing was stored. If it lands, the
            // transaction's task announces it, to this server too.
            case .unknown: throw .uncertain("write room \(room): \(error)")
            }
        }
    }

    private func lockedWrite(
        _ room: String, after version: Int, sessions: [String], gate: CommitGate,
        prepare: @escaping @Sendable (RoomCatchUp) async -> RoomWrite
    ) async throws(StorageError) {
        let keepHistory = configuration.keepHistory
        let idleLimit = String(Int(configuration.operationTimeout * 2 / .milliseconds(1)))
        try await bounded("write room \(room)") { [self] in
            let last = try await client.withTransaction(logger: logger) { connection in
                // The room's lock; a server that stalls holding it releases it instead of holding every other server
                // back. Its row exists once a client joined (`claim`); the insert covers rooms made before that.
                var found = try await lockAndRead(room, sessions: sessions, idleLimit, connection)
                if found == nil {
                    try await connection.query(
                        "INSERT INTO rooms (room) VALUES (\(room)) ON CONFLICT (room) DO NOTHING", logger: logger)
                    found = try await lockAndRead(room, sessions: sessions, idleLimit, connection)
                }
                guard let found else { throw StorageError.database("room \(room) has no row") }
                var catchUp = found.catchUp
                if found.version > version || !found.complete {
                    // Other servers committed the room: a statement of its own reads what they committed, and, when
                    // the lock waited for a commit after the first statement began, the marks and timers it left.
                    (catchUp.missed, catchUp.marks, catchUp.timers) = try await missedAndMarks(
                        room, after: version, sessions: sessions, connection)
                }
                let write = await prepare(catchUp)
                for (offset, change) in write.changes.enumerated()
                where change.room != room || change.version != found.version + 1 + offset {
                    throw StorageError.database(
                        "room \(room) is at version \(found.version), so its next change is "
                            + "\(found.version + 1 + offset), not \(change.room) version \(change.version); "
                            + "nothing was stored")
                }
                try await commit(write, room: room, keepHistory: keepHistory, connection)
                // Past the deadline the caller has been told the write failed: roll back rather than commit.
                guard gate.enterCommit() else { throw CancellationError() }
                return write.changes.last?.version
            }
            // Other servers hear of the commit after it; this one too when it had given up waiting for it.
            let late = gate.committed()
            if let last {
                announce(room: room, version: last)
                if late { continuation.yield(.committed(room: room, version: last)) }
            }
        }
    }

    /// What a locked write finds under the lock.
    private struct Found {
        /// The room's stored version.
        var version: Int
        var catchUp: RoomCatchUp
        /// Whether `catchUp`'s marks and timers are those of every commit before the lock was granted.
        var complete: Bool
    }

    /// Locks `room`'s row for the transaction and reads, in the same statement, its version and the stored marks of
    /// `sessions`; nil when the room has no row.
    ///
    /// The statement reads the log as it was when it began. When another server committed the room after that (the
    /// lock waited for it, or the row changed as the statement ran), the row locked is not the one the statement
    /// sees (`ctid` differs): the read is incomplete. Every write of a room's log updates its row, so an unchanged row
    /// means nothing was committed since.
    private func lockAndRead(
        _ room: String, sessions: [String], _ idleLimit: String, _ connection: PostgresConnection
    ) async throws -> Found? {
        var found = Found(version: 0, catchUp: RoomCatchUp(missed: [], marks: [], epoch: nil), complete: false)
        var locked = false
        let statement = Statements.LockAndRead(room: room, sessions: sessions, idleLimit: idleLimit)
        for try await (kind, number, answer, text, time, complete) in try await connection.execute(
            statement, logger: logger)
        {
            switch kind {
            case 0:
                locked = true
                found.version = number
                found.catchUp.epoch = text
                found.complete = complete ?? false
            case 3:
                if let text { found.catchUp.timers[text] = number }
            default:
                guard let text, let time else { continue }
                found.catchUp.marks.append(
                    StoredMark(
                        room: room, session: text, seq: number, time: time,
                        stored: answer.map { String(decoding: $0.readableBytesView, as: UTF8.self) }))
            }
        }
        return locked ? found : nil
    }

    /// What other servers committed after `version`, the stored marks of `sessions` and the pending timers they
    /// name, in one round trip.
    private func missedAndMarks(
        _ room: String, after version: Int, sessions: [String], _ connection: PostgresConnection
    ) async throws -> (missed: [StoredChange], marks: [StoredMark], timers: [String: Int]) {
        var missed: [StoredChange] = []
        var marks: [StoredMark] = []
        var timers: [String: Int] = [:]
        for (number, message, inverse, session, time) in try await connection.rows(
            """
            SELECT version, message, inverse, NULL::text, NULL::float8 FROM changes
            WHERE room = \(room) AND version > \(version)
            UNION ALL
            SELECT seq, convert_to(answer, 'UTF8'), NULL::bytea, session, time FROM session_marks
            WHERE room = \(room) AND session = ANY(\(sessions))
            UNION ALL
            SELECT ord, NULL::bytea, NULL::bytea, name, NULL::float8 FROM timers
            WHERE room = \(room) AND 'timer:' || name = ANY(\(sessions))
            """, decoding: (Int, ByteBuffer?, ByteBuffer?, String?, Double?).self, logger: logger)
        {
            if let session, time == nil {
                timers[session] = number
            } else if let session, let time {
                let answer = message.map { String(decoding: $0.readableBytesView, as: UTF8.self) }
                marks.append(StoredMark(room: room, session: session, seq: number, time: time, stored: answer))
            } else if let message, let inverse {
                missed.append(StoredChange(room: room, version: number, message: message.bytes, record: inverse.bytes))
            }
        }
        missed.sort { $0.version < $1.version }
        return (missed, marks, timers)
    }

    /// Stores one room's write in the open transaction: changes, marks (pruned) and the room's version in one
    /// statement (``Statements/Store``); epochs and snapshots, when there are any, after it.
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
                room: room, session: mark.session, seq: max(mark.seq, latest[mark.session]?.seq ?? 0), time: mark.time,
                answer: mark.answer ?? latest[mark.session]?.answer, holes: mark.holes ?? latest[mark.session]?.holes)
        }
        let marks = latest.values.sorted { $0.session < $1.session }
        let last = versions.last ?? 0
        _ = try await connection.execute(
            Statements.Store(
                room: room, versions: versions, messages: messages, inverses: inverses, sessions: marks.map(\.session),
                seqs: marks.map(\.seq), times: marks.map(\.time), last: last,
                answers: marks.map { $0.storedColumn ?? "" },
                idleBefore: write.sessions.idleBefore(now: Date.now.timeIntervalSince1970),
                markLimit: write.sessions.limit),
            logger: logger)
        var rest = write
        rest.changes = []
        rest.sessions.marks = []
        try await store(rest, keepHistory: keepHistory, connection)
    }

    public func versions(of rooms: [String]) async throws(StorageError) -> [String: Int] {
        try await bounded("read the versions of rooms") { [self] in
            var versions: [String: Int] = [:]
            for (room, version) in try await client.rows(
                "SELECT room, version FROM rooms WHERE room = ANY(\(rooms))", decoding: (String, Int).self,
                logger: logger)
            {
                versions[room] = version
            }
            return versions
        }
    }

    public func claim(room: String, epoch: String) async throws(StorageError) -> String {
        try await bounded("create room \(room)") { [self] in
            // DO UPDATE rather than DO NOTHING: it returns the row a concurrent first claim committed, which a
            // separate SELECT in this statement's snapshot might not see.
            for stored in try await client.rows(
                """
                INSERT INTO rooms (room, epoch) VALUES (\(room), \(epoch))
                ON CONFLICT (room) DO UPDATE SET epoch = COALESCE(rooms.epoch, excluded.epoch)
                RETURNING epoch
                """, decoding: String.self, logger: logger)
            {
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
