import LockstepStorage

/// Per room, the highest `seq` acknowledged for each client session: a request at or below it is a duplicate.
///
/// Bounded: past `limit` sessions the least recently active is forgotten, and a session idle for longer than the
/// server's `sessionIdle` is forgotten at the next sweep. A forgotten session starts again from 0. Loop-bound.
struct SessionMarks {
    struct Mark {
        var seq: Int
        /// When the mark last moved, in seconds since 1970 (wall clock, so it means the same after a restart).
        var time: Double
    }

    private(set) var marks: [String: Mark] = [:]
    private var lastSweep: Double = 0

    init(_ stored: [StoredMark] = []) {
        for mark in stored { marks[mark.session] = Mark(seq: mark.seq, time: mark.time) }
    }

    /// The session's mark; 0 for a session this room does not remember.
    func seq(for session: SessionName) -> Int {
        marks[session.value]?.seq ?? 0
    }

    /// Moves `session`'s mark up to `seq` (never down), then enforces the bounds.
    mutating func advance(_ session: SessionName, to seq: Int, now: Double, idleSeconds: Double, limit: Int) {
        let old = marks[session.value]?.seq ?? 0
        marks[session.value] = Mark(seq: max(old, seq), time: now)
        // A sweep costs a pass over the marks: at most once per tenth of the idle time.
        if now - lastSweep >= idleSeconds / 10 {
            lastSweep = now
            forgetIdle(now: now, idleSeconds: idleSeconds)
        }
        while marks.count > max(limit, 1), let oldest = marks.min(by: { $0.value.time < $1.value.time })?.key {
            marks[oldest] = nil
        }
    }

    /// Forgets every session idle for `idleSeconds` or longer.
    mutating func forgetIdle(now: Double, idleSeconds: Double) {
        marks = marks.filter { now - $0.value.time < idleSeconds }
    }
}
