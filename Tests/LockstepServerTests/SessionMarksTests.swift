@testable import LockstepServer
import LockstepStorage
import Testing

/// How a session's request in a write that failed is answered: what a stored write applied stays a duplicate, what
/// it did not is refused and becomes a hole once a later request is applied.
@Suite struct SessionMarksTests {
    /// Session `s` stored up to `seq` 3.
    static func stored() -> SessionMarks {
        SessionMarks([StoredMark(room: "r", session: "s", seq: 3, time: 0)])
    }

    @Test func aRequestAStoredWriteAppliedIsADuplicateWhenItsNextWriteFails() {
        for seq in 1...3 {
            var marks = Self.stored()
            #expect(marks.writeFailed(seq, of: "s", now: 1) == .duplicate, "seq \(seq)")
            #expect(marks.covers(seq, of: "s"))
            #expect(marks.storedSeq(for: "s") == 3)
        }
    }

    /// A refusal a later request made a hole of, in a write that was then taken back, stays a refusal: the next
    /// request stored leaves the hole, so a client resuming sends the refused request again.
    @Test func aRefusalOutlivesALaterRequestTakenBack() {
        var marks = Self.stored()
        #expect(marks.writeFailed(4, of: "s", now: 1) == .refused)
        marks.advance("s", to: 5, now: 2, idleSeconds: 60, limit: 10)
        // The write of 5 failed: taken back, and 5 answered `unavailable` as well.
        marks.rollBack("s")
        #expect(marks.writeFailed(5, of: "s", now: 2) == .refused)
        #expect(!marks.covers(5, of: "s") && !marks.covers(4, of: "s"))
        marks.advance("s", to: 6, now: 3, idleSeconds: 60, limit: 10)
        #expect(marks.covers(6, of: "s") && !marks.covers(4, of: "s") && !marks.covers(5, of: "s"))
        #expect(marks.holesToStore(for: "s") == [4, 5], "the holes go into the log with the mark")
        marks.stored(StoredMark(room: "r", session: "s", seq: 6, time: 3, holes: [4, 5]))
        #expect(marks.storedSeq(for: "s") == 3, "a resuming client sends 4 again")
    }

    @Test func aRequestNeverAppliedIsRefusedAndAHoleOnceALaterOneIsApplied() {
        var marks = Self.stored()
        #expect(marks.writeFailed(4, of: "s", now: 1) == .refused)
        #expect(marks.writeFailed(1, of: "other", now: 1) == .refused)
        marks.advance("s", to: 5, now: 2, idleSeconds: 60, limit: 10)
        #expect(marks.covers(5, of: "s") && !marks.covers(4, of: "s"), "4 is a hole below the mark")
        // Sent again and refused again, the hole stays one: never a duplicate.
        #expect(marks.writeFailed(4, of: "s", now: 3) == .refused)
        #expect(!marks.covers(4, of: "s"))
    }
}
