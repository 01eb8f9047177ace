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
    }

    private(set) var marks: [String: Mark] = [:]
    private var lastSweep: Double = 0

    init(_ stored: [StoredMark] = []) {
        for mark in stored {
            marks[mark.session] = Mark(seq: mark.seq, stored: mark.seq, time: mark.time, answer: mark.answer)
        }
    }

    /// The session's mark: requests up to it were applied. 0 for a session this room does not remember.
    func seq(for session: String) -> Int {
        marks[session]?.seq ?? 0
    }

    /// The session's mark as the log has it, for `snapshot` and `resume`.
    func storedSeq(for session: String) -> Int {
        marks[session]?.stored ?? 0
    }

    /// The first answer of the request that set an idempotency key's mark; nil when no request with the key was
    /// applied (or it was taken back).
    func answer(for key: String) -> String? {
        guard let mark = marks[key], mark.seq > 0 else { return nil }
        return mark.answer
    }

    /// Moves `session`'s mark up to `seq` (never down), then enforces the bounds; it counts as stored once the
    /// room's pipeline says so (``stored(_:upTo:)``).
    mutating func advance(
        _ session: String, to seq: Int, answer: String? = nil, now: Double, idleSeconds: Double, limit: Int
    ) {
        let old = marks[session] ?? Mark(seq: 0, stored: 0, time: now)
        marks[session] = Mark(seq: max(old.seq, seq), stored: old.stored, time: now, answer: answer ?? old.answer)
        // A sweep costs a pass over the marks: at most once per tenth of the idle time.
        if now - lastSweep >= idleSeconds / 10 {
            lastSweep = now
            forgetIdle(now: now, idleSeconds: idleSeconds)
        }
        while marks.count > max(limit, 1), let oldest = marks.min(by: { $0.value.time < $1.value.time })?.key {
            marks[oldest] = nil
        }
    }

    /// The log now has `session`'s mark up to `seq`.
    mutating func stored(_ session: String, upTo seq: Int) {
        guard let mark = marks[session] else { return }
        marks[session]?.stored = max(mark.stored, min(seq, mark.seq))
    }

    /// Another server stored `mark`: that session's requests up to it were applied there.
    mutating func adopt(_ mark: StoredMark) {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.marksNotAdopted) { return }
        #endif
        let old = marks[mark.session] ?? Mark(seq: 0, stored: 0, time: mark.time)
        marks[mark.session] = Mark(
            seq: max(old.seq, mark.seq), stored: max(old.stored, mark.seq), time: max(old.time, mark.time),
            answer: mark.answer ?? old.answer)
    }

    /// Takes `session`'s mark back to what the log has: the requests it covered beyond that were taken back.
    mutating func rollBack(_ session: String) {
        guard let mark = marks[session] else { return }
        marks[session]?.seq = mark.stored
    }

    /// Forgets every session idle for `idleSeconds` or longer.
    mutating func forgetIdle(now: Double, idleSeconds: Double) {
        marks = marks.filter { now - $0.value.time < idleSeconds }
    }
}
