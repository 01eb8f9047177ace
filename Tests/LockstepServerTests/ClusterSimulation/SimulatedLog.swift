import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepStorage

/// The database several simulated servers share: per room, its rows by version, its session marks and the lock a
/// write holds; and beside it, what the checks compare with: the room's state and undo counts at each committed
/// version, and which version each request id made; and the timer rows, with what became of each timer scheduled.
struct SimulatedLog {
    /// What became of a timer whose scheduling was committed, by the id of the request that scheduled it.
    enum TimerFate: Equatable {
        case pending
        /// Cancelled, or replaced by a timer of the same name.
        case gone
        /// Its change is the log's version `version`.
        case fired(version: Int)
    }

    /// A write's change to the timer rows, in the order the batch made them: a row stored, or the name's row removed.
    typealias TimerOp = (name: String, timer: StoredTimer?)

    /// One room's log.
    struct Room {
        var rows: [StoredChange] = []
        var marks: [String: Int] = [:]
        /// The first answer each idempotency key's mark keeps.
        var answers: [String: String] = [:]
        /// Each session's holes (`StoredMark.holes`), as its last stored mark left them, and every hole it ever had
        /// (a mark read before a hole was filled is still below it when its answer arrives).
        var holes: [String: [Int]] = [:]
        var everHoles: [String: Set<Int>] = [:]
        /// The transaction holding the room's row lock.
        var lockedBy: Int?
        /// The state at each version, from 0, as the patches make it.
        var states: [JSON]
        /// Global undo and redo counts at each version, as the patches say.
        var counts: [(undo: Int, redo: Int)] = [(0, 0)]
        /// The version each request id made, and the connection that sent it then (`cause.client`).
        var versionOf: [String: Int] = [:]
        var senderOf: [String: String] = [:]
        /// Every request a committed write applied, whether it made a version or not: what the marks stand for.
        var committedRequests: Set<String> = []
        /// The timer rows, by name.
        var timers: [String: StoredTimer] = [:]
        var timerFates: [String: TimerFate] = [:]
    }

    var rooms: [String: Room]
    /// The table of peers: each server's last publication of its clients of a room, by room and server, with the
    /// server's life that made it.
    var peers: [String: [Int: (incarnation: Int, peers: [Peer])]] = [:]
    /// Until this step the database refuses every call (it is restarting).
    var downUntil = -1

    init(rooms names: [String], initial: JSON) {
        rooms = [:]
        for name in names { rooms[name] = Room(states: [initial]) }
    }

    func isDown(at step: Int) -> Bool { step < downUntil }

    func version(of room: String) -> Int { rooms[room]!.rows.count }

    /// `session`'s stored mark in `room`, as a read at `step` finds it.
    func mark(of session: String, in room: String, at step: Int) -> StoredMark? {
        rooms[room]!.marks[session].map {
            StoredMark(
                room: room, session: session, seq: $0, time: Double(step), answer: rooms[room]!.answers[session],
                holes: rooms[room]!.holes[session])
        }
    }

    func rows(of room: String, after version: Int) -> [StoredChange] {
        Array(rooms[room]!.rows.dropFirst(max(0, version)))
    }

    /// Appends committed rows (with the state the writer had after each); returns what is wrong with them, if
    /// anything: the table's primary key and the checks' own view of one order.
    mutating func append(
        _ rows: [StoredChange], states: [JSON], marks: [StoredMark] = [], requests: [String] = [],
        timerOps: [TimerOp] = [],
        cancels: [(name: String, at: Int)] = [], to name: String, scheduledHere: Set<String>? = nil
    ) -> [String] {
        let scheduledRows = Set(timerOps.compactMap { $0.timer.flatMap(Self.requestID) })
        var problems: [String] = []
        var room = rooms[name]!
        let timersBefore = room.timers
        // On a log of a server's own, a timer may be scheduled and fire within one write (where the rows stored do
        // not show it, the writer says so).
        let scheduledHere = scheduledHere ?? scheduledRows
        var firedHere: Set<String> = []
        for (row, writerState) in zip(rows, states) {
            guard row.version == room.rows.count + 1 else {
                problems.append("a write committed version \(row.version) on top of \(room.rows.count)")
                break
            }
            guard
                case .patch(_, let ops, let cause, let undo, let redo)? = try? ServerMessage(
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
            if cause.kind == .timer {
                problems += Self.fired(
                    cause, at: row.version, rowsBefore: timersBefore, scheduledHere: scheduledHere, in: &room)
                if let id = cause.id { firedHere.insert(id) }
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
        for mark in marks {
            room.marks[mark.session] = max(room.marks[mark.session] ?? 0, mark.seq)
            if let answer = mark.answer { room.answers[mark.session] = answer }
            if let holes = mark.holes {
                room.holes[mark.session] = holes
                room.everHoles[mark.session, default: []].formUnion(holes)
            }
        }
        room.committedRequests.formUnion(requests)
        problems += Self.store(timerOps, cancels: cancels, firedHere: firedHere, in: &room)
        // Scheduled in this write and gone in it too (cancelled or replaced): no row was stored.
        for id in scheduledHere.subtracting(scheduledRows) where room.timerFates[id] == nil {
            room.timerFates[id] = .gone
        }
        rooms[name] = room
        return problems
    }

    /// The request id a timer row was scheduled by.
    static func requestID(of timer: StoredTimer) -> String? { TimerRecord(timer.request)?.id }

    /// A write's timer rows as the log stores them (every scheduled row, then every removal; the queue kept each
    /// name's last change), with the batch's cancels that must leave no row of their name once it is stored: those
    /// the batch did not follow with a row of the name.
    static func storedTimerOps(
        scheduled: [StoredTimer], gone: [TimerKey], batch: [TimerOp], cancels: [(name: String, at: Int)]
    ) -> (ops: [TimerOp], cancels: [(name: String, at: Int)]) {
        let ops = scheduled.map { ($0.name, Optional($0)) } + gone.map { ($0.name, StoredTimer?.none) }
        let standing = cancels.filter { cancel in
            !batch[cancel.at...].contains { $0.name == cancel.name && $0.timer != nil }
        }
        return (ops, standing.map { ($0.name, ops.count) })
    }

    /// The requests whose timers a batch scheduled: the log accepts such a timer fired, cancelled or replaced within
    /// the write, where the rows stored do not show it.
    static func scheduledHere(_ batch: [TimerOp]) -> Set<String> {
        Set(batch.compactMap { $0.timer.flatMap(requestID) })
    }

    /// A timer's change: its timer was pending, and its row there when the write took the lock (or stored by the
    /// same write, `scheduledHere`).
    private static func fired(
        _ cause: Cause, at version: Int, rowsBefore: [String: StoredTimer], scheduledHere: Set<String>,
        in room: inout Room
    ) -> [String] {
        guard let name = cause.timer, let id = cause.id else {
            return ["version \(version) is a timer's change without its name or id"]
        }
        var problems: [String] = []
        switch room.timerFates[id] {
        case nil where scheduledHere.contains(id): break
        case nil: problems.append("timer \(name) (\(id)) fired at version \(version), and was never scheduled")
        case .fired(let earlier)?:
            problems.append("timer \(name) (\(id)) fired twice: versions \(earlier) and \(version)")
        case .gone?:
            problems.append("timer \(name) (\(id)) fired at version \(version), after it was cancelled or replaced")
        case .pending?: break
        }
        if rowsBefore[name].flatMap(requestID) != id, !scheduledHere.contains(id) {
            problems.append("timer \(name) (\(id)) fired at version \(version) without its row in the log")
        }
        room.timerFates[id] = .fired(version: version)
        return problems
    }

    /// The write's timer rows; a cancel (made before op `at`) leaves no row of its name there, and afterwards no
    /// row may stand for a timer that fired.
    private static func store(
        _ ops: [TimerOp], cancels: [(name: String, at: Int)], firedHere: Set<String>, in room: inout Room
    ) -> [String] {
        var problems: [String] = []
        func checkCancels(at index: Int) {
            for cancel in cancels where cancel.at == index {
                if let timer = room.timers[cancel.name] {
                    problems.append(
                        "a committed cancel of \(cancel.name) left its timer (\(requestID(of: timer) ?? "?")) pending")
                }
            }
        }
        for (index, op) in ops.enumerated() {
            checkCancels(at: index)
            if let old = room.timers[op.name], let id = requestID(of: old), room.timerFates[id] == .pending {
                room.timerFates[id] = .gone
            }
            room.timers[op.name] = op.timer
            guard let timer = op.timer else { continue }
            guard let id = requestID(of: timer) else {
                problems.append("timer \(op.name) is stored without a request id")
                continue
            }
            // Scheduled and fired in this write: its fate is already told.
            if firedHere.contains(id) { continue }
            if room.timerFates[id] != nil { problems.append("timer \(op.name) (\(id)) was scheduled twice") }
            room.timerFates[id] = .pending
        }
        checkCancels(at: ops.count)
        for name in room.timers.keys.sorted() {
            guard let id = requestID(of: room.timers[name]!), case .fired(let version)? = room.timerFates[id] else {
                continue
            }
            problems.append("the row of timer \(name) (\(id)) remains after it fired at version \(version)")
        }
        return problems
    }
}
