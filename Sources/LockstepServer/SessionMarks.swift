#if LOCKSTEP_MUTANTS
import LockstepCore
#endif
import LockstepStorage

/// Per room, the highest `seq` applied for each client session: a request at or below it is a duplicate. The marks of
/// idempotency keys (see ``Idempotency``) are kept here too, with the answer their request got.
///
/// A mark is reported (in `snapshot` and `resume`) only once it is in the log, since a reconnecting client drops
/// the requests it covers: one applied but not yet stored is sent again and answered as a duplicate after the write.
///
/// A request answered `unavailable` was not applied, yet a later one of its session may be: its `seq` is then a hole
/// below the mark, stored with it. A hole is applied when sent again, not answered as a duplicate, and the mark a
/// client resumes with stays below the lowest one, so that a client that never got the answer sends it again.
///
/// Bounded: past `limit` sessions the least recently active is forgotten, and a session idle for longer than the
/// server's `sessionIdle` is forgotten at the next sweep. A forgotten session starts again from 0. Loop-bound.
struct SessionMarks {
    struct Mark {
        var seq: Int
        /// The highest `seq` the log has (equal to `seq` without a log).
        var stored: Int
        /// When the mark last moved, in seconds since 1970 (wall clock, so it means the same after a restart).
        var time: Double
        /// An idempotency key's first answer.
        var answer: String?
        /// `seq`s below `seq` answered `unavailable` and not applied since, and those the log has.
        var holes: [Int] = []
        var storedHoles: [Int] = []
        /// `seq`s above `seq` answered `unavailable` here: holes once a later one is applied.
        var refused: [Int] = []
    }

    /// The most holes a session keeps; past it the lowest is forgotten (and a client that never got its answer
    /// would take it as applied).
    static let holeLimit = 32

    private(set) var marks: [String: Mark] = [:]
    private var lastSweep: Double = 0

    init(_ stored: [StoredMark] = []) {
        for mark in stored {
            let holes = mark.holes ?? []
            marks[mark.session] = Mark(
                seq: mark.seq, stored: mark.seq, time: mark.time, answer: mark.answer, holes: holes, storedHoles: holes)
        }
    }

    /// Whether `seq` of `session` was applied: at or below its mark, and not a hole.
    func covers(_ seq: Int, of session: String) -> Bool {
        guard let mark = marks[session] else { return false }
        return seq <= mark.seq && !mark.holes.contains(seq)
    }

    /// How a request of `session` in a write that failed (and was taken back) is answered.
    enum FailedRequest {
        /// Applied by a stored write before: sent again after a reconnection, it is still a duplicate.
        case duplicate
        /// Not applied: answered `unavailable`, and remembered as refused.
        case refused
    }

    /// `seq` of `session` was in a write that failed: a duplicate if a stored write applied it before (`unavailable`
    /// would have its sender take it as not applied, and send it as a new request), else refused.
    mutating func writeFailed(_ seq: Int, of session: String, now: Double) -> FailedRequest {
        if covers(seq, of: session) { return .duplicate }
        refused(seq, of: session, now: now)
        return .refused
    }

    /// `seq` of `session` was answered `unavailable`: not applied, so sent again it is not a duplicate.
    private mutating func refused(_ seq: Int, of session: String, now: Double) {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.unavailableNotAHole) { return }
        #endif
        var mark = marks[session] ?? Mark(seq: 0, stored: 0, time: now)
        guard seq > mark.seq, !mark.refused.contains(seq) else { return }
        mark.refused.append(seq)
        marks[session] = mark
    }

    /// The session's holes as a mark to store carries them: nil when it never had any, so the log keeps what it has.
    func holesToStore(for session: String) -> [Int]? {
        guard let mark = marks[session], !mark.holes.isEmpty || !mark.storedHoles.isEmpty else { return nil }
        return mark.holes
    }

    /// The session's mark as the log has it, for `snapshot` and `resume`: below its lowest stored hole.
    func storedSeq(for session: String) -> Int {
        guard let mark = marks[session] else { return 0 }
        return mark.storedHoles.min().map { min(mark.stored, $0 - 1) } ?? mark.stored
    }

    /// The first answer of the request that set an idempotency key's mark; nil when no request with the key was
    /// applied (or it was taken back).
    func answer(for key: String) -> String? {
        guard let mark = marks[key], mark.seq > 0 else { return nil }
        return mark.answer
    }

    /// Moves `session`'s mark up to `seq` (never down; a hole sent again is filled), then enforces the bounds; it
    /// counts as stored once the room's pipeline says so (``stored(_:)``).
    mutating func advance(
        _ session: String, to seq: Int, answer: String? = nil, now: Double, idleSeconds: Double, limit: Int
    ) {
        var mark = marks[session] ?? Mark(seq: 0, stored: 0, time: now)
        if seq <= mark.seq {
            mark.holes.removeAll { $0 == seq }
        } else {
            mark.holes += mark.refused.filter { $0 < seq }.sorted()
            mark.holes.removeFirst(max(0, mark.holes.count - Self.holeLimit))
            mark.refused.removeAll { $0 <= seq }
            mark.seq = seq
        }
        mark.time = now
        mark.answer = answer ?? mark.answer
        marks[session] = mark
        // A sweep costs a pass over the marks: at most once per tenth of the idle time.
        if now - lastSweep >= idleSeconds / 10 {
            lastSweep = now
            forgetIdle(now: now, idleSeconds: idleSeconds)
        }
        while marks.count > max(limit, 1), let oldest = marks.min(by: { $0.value.time < $1.value.time })?.key {
            marks[oldest] = nil
        }
    }

    /// The log now has `stored` (up to its `seq`, with its holes).
    mutating func stored(_ stored: StoredMark) {
        guard let mark = marks[stored.session] else { return }
        marks[stored.session]?.stored = max(mark.stored, min(stored.seq, mark.seq))
        if let holes = stored.holes { marks[stored.session]?.storedHoles = holes }
    }

    /// Another server stored `mark`: that session's requests up to it were applied there.
    mutating func adopt(_ mark: StoredMark) {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.marksNotAdopted) { return }
        #endif
        var adopted = marks[mark.session] ?? Mark(seq: 0, stored: 0, time: mark.time)
        if let holes = mark.holes, mark.seq >= adopted.seq {
            adopted.holes = holes
            adopted.storedHoles = holes
        }
        adopted.refused.removeAll { $0 <= mark.seq }
        adopted.seq = max(adopted.seq, mark.seq)
        adopted.stored = max(adopted.stored, mark.seq)
        adopted.time = max(adopted.time, mark.time)
        adopted.answer = mark.answer ?? adopted.answer
        marks[mark.session] = adopted
    }

    /// Takes `session`'s mark back to what the log has: the requests it covered beyond that were taken back, and the
    /// refusals they made holes of are refusals again (forgotten, a later request stored would cover them).
    mutating func rollBack(_ session: String) {
        guard var mark = marks[session] else { return }
        #if LOCKSTEP_MUTANTS
        let keepsRefusals = !Mutant.isActive(.rollBackForgetsRefusals)
        #else
        let keepsRefusals = true
        #endif
        if keepsRefusals { mark.refused = Array(Set(mark.refused + mark.holes.filter { $0 > mark.stored })).sorted() }
        mark.seq = mark.stored
        mark.holes = mark.storedHoles
        marks[session] = mark
    }

    /// Forgets every session idle for `idleSeconds` or longer.
    mutating func forgetIdle(now: Double, idleSeconds: Double) {
        marks = marks.filter { now - $0.value.time < idleSeconds }
    }
}
