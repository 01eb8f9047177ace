import PostgresNIO

/// The statements of every room write, prepared once per connection: parsing and planning them again for each write
/// would cost PostgreSQL about as much as running them.
enum Statements {
    /// Locks a room's row for the transaction and reads, as the statement began, the stored marks of some sessions.
    /// One row per result: kind 0 is the room (its version, epoch, and whether its row is still the one the
    /// statement's snapshot sees), kind 2 a mark (its answer as bytes), kind 3 a pending timer named among the
    /// sessions as `timer:NAME` (its order). A few small rows, which arrive at once: what other servers committed,
    /// which may be many, is read whole by another statement (see `PostgresConnection.rows`).
    struct LockAndRead: PostgresPreparedStatement {
        typealias Row = (Int, Int, ByteBuffer?, String?, Double?, Bool?)

        static let sql = """
            WITH locked AS MATERIALIZED (
                SELECT version, epoch, ctid, set_config('idle_in_transaction_session_timeout', $3, true)
                FROM rooms WHERE room = $1 FOR UPDATE
            )
            SELECT 0::int8, version, NULL::bytea, epoch, NULL::float8, ctid = (SELECT ctid FROM rooms WHERE room = $1)
            FROM locked
            UNION ALL
            SELECT 2, seq, convert_to(answer, 'UTF8'), session, time, NULL FROM session_marks
            WHERE room = $1 AND session = ANY($2)
            UNION ALL
            SELECT 3, ord, NULL, name, NULL, NULL FROM timers WHERE room = $1 AND 'timer:' || name = ANY($2)
            """

        var room: String
        var sessions: [String]
        /// `idle_in_transaction_session_timeout` for the transaction, in milliseconds.
        var idleLimit: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(room)
            bindings.append(sessions)
            bindings.append(idleLimit)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Inserts a room's new changes and upserts its sessions' marks (never moving a seq down; an empty answer is
    /// none), deletes its idle marks and those past the limit, and moves its version: one round trip per write.
    /// A change that is already stored fails the statement: the primary key is a second guard of the order.
    ///
    /// The parts of one statement see the rows as they were before it, and none may touch a row another writes: the
    /// marks written now take part in the ranking with their new times but are never deleted by it (so a write
    /// naming more sessions than the limit keeps them all until the next write).
    struct Store: PostgresPreparedStatement {
        typealias Row = ()

        static let sql = """
            WITH new_changes AS (
                INSERT INTO changes (room, version, message, inverse)
                SELECT $1, * FROM unnest($2::bigint[], $3::bytea[], $4::bytea[])
            ), new_marks AS (
                INSERT INTO session_marks (room, session, seq, time, answer)
                SELECT $1, s, q, t, NULLIF(a, '') FROM unnest($5::text[], $6::bigint[], $7::float8[], $9::text[])
                    AS u(s, q, t, a)
                ON CONFLICT (room, session) DO UPDATE
                    SET seq = GREATEST(session_marks.seq, excluded.seq), time = excluded.time,
                        answer = COALESCE(excluded.answer, session_marks.answer)
            ), ranked AS (
                SELECT session, time FROM session_marks WHERE room = $1 AND session <> ALL($5::text[])
                UNION ALL
                SELECT s, t FROM unnest($5::text[], $7::float8[]) AS u(s, t)
            ), old_marks AS (
                DELETE FROM session_marks WHERE room = $1 AND session <> ALL($5::text[]) AND (time < $10 OR session
                    NOT IN (SELECT session FROM ranked ORDER BY time DESC, session LIMIT $11))
            )
            UPDATE rooms SET version = GREATEST(version, $8) WHERE room = $1
            """

        var room: String
        var versions: [Int]
        var messages: [ByteBuffer]
        var inverses: [ByteBuffer]
        var sessions: [String]
        var seqs: [Int]
        var times: [Double]
        var last: Int
        var answers: [String]
        /// Marks moved before this time are idle.
        var idleBefore: Double
        /// How many sessions' marks the room keeps.
        var markLimit: Int

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 11)
            bindings.append(room)
            bindings.append(versions)
            bindings.append(messages)
            bindings.append(inverses)
            bindings.append(sessions)
            bindings.append(seqs)
            bindings.append(times)
            bindings.append(last)
            bindings.append(answers)
            bindings.append(idleBefore)
            bindings.append(markLimit)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }

    /// Sends one notification per payload on a channel; one row, their count.
    struct Notify: PostgresPreparedStatement {
        typealias Row = Int

        static let sql = "SELECT count(pg_notify($1, payload)) FROM unnest($2::text[]) AS payload"

        var channel: String
        var payloads: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(channel)
            bindings.append(payloads)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
