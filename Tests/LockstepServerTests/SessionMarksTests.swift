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
