import LockstepCore
import LockstepJSON
import LockstepStorage

/// The database several simulated servers share: per room, its rows by version, its session marks and the lock a
/// write holds; and beside it, what the checks compare with: the room's state and undo counts at each committed
/// version, and which version each request id made.
struct SimulatedLog {
    /// One room's log.
    struct Room {
        var rows: [StoredChange] = []
        var marks: [String: Int] = [:]
        /// The transaction holding the room's row lock.
        var lockedBy: Int?
        /// The state at each version, from 0, as the patches make it.
        var states: [JSON]
        /// Global undo and redo counts at each version, as the patches say.
        var counts: [(undo: Int, redo: Int)] = [(0, 0)]
        /// The version each request id made, and the connection that sent it then (`cause.client`).
        var versionOf: [String: Int] = [:]
        var senderOf: [String: String] = [:]
    }

    var rooms: [String: Room]
    /// Until this step the database refuses every call (it is restarting).
    var downUntil = -1

    init(rooms names: [String], initial: JSON) {
        rooms = [:]
        for name in names { rooms[name] = Room(states: [initial]) }
    }

    func isDown(at step: Int) -> Bool { step < downUntil }

    func version(of room: String) -> Int { rooms[room]!.rows.count }

    func rows(of room: String, after version: Int) -> [StoredChange] {
        Array(rooms[room]!.rows.dropFirst(max(0, version)))
    }

    /// Appends committed rows (with the state the writer had after each); returns what is wrong with them, if
    /// anything: the table's primary key and the checks' own view of one order.
    mutating func append(_ rows: [StoredChange], states: [JSON], marks: [String: Int], to name: String) -> [String] {
        var problems: [String] = []
        var room = rooms[name]!
        for (row, writerState) in zip(rows, states) {
            guard row.version == room.rows.count + 1 else {
                problems.append("a write committed version \(row.version) on top of \(room.rows.count)")
                break
            }
            guard case .patch(_, let ops, let cause, let undo, let redo)? = try? ServerMessage(
                json: JSON(parsing: row.message))
            else {
                problems.append("version \(row.version) is not a patch")
                break
            }
            var state = room.states[room.states.count - 1]
            do {
                _ = try ops.apply(to: &state)
            } catch {
                problems.append("the patch of version \(row.version) does not apply to version \(row.version - 1)")
            }
            if state != writerState {
                problems.append("the patch of version \(row.version) does not make the state its writer had")
            }
            if let id = cause.id {
                if let earlier = room.versionOf[id] {
                    problems.append("request \(id) was applied twice: versions \(earlier) and \(row.version)")
                }
                room.versionOf[id] = row.version
                room.senderOf[id] = cause.client
            }
            room.rows.append(row)
            room.states.append(state)
            room.counts.append((undo, redo))
        }
        for (session, seq) in marks { room.marks[session] = max(room.marks[session] ?? 0, seq) }
        rooms[name] = room
        return problems
    }
}
