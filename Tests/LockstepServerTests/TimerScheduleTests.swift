@testable import LockstepServer
import LockstepStorage
import Testing

/// The server's timers with no I/O: one wait, always for the soonest; due timers to their rooms in order; a timer
/// whose room's turn never fired it handed over again.
@Suite struct TimerScheduleTests {
    static func schedule(
        _ schedule: inout TimerSchedule, _ name: String, room: String = "r", due: Int, now: Int = 0
    ) -> (timer: StoredTimer, wait: TimerSchedule.Wait) {
        schedule.schedule(room: room, name: name, due: due, request: [], now: now)
    }

    @Test func theWaitIsAlwaysForTheSoonestPendingTimer() {
        var timers = TimerSchedule()
        #expect(Self.schedule(&timers, "a", due: 100).wait == .arm(due: 100))
        #expect(Self.schedule(&timers, "b", due: 200).wait == .keep)
        // `a` again, later: the wait moves to `b`.
        #expect(Self.schedule(&timers, "a", due: 300).wait == .arm(due: 200))
        #expect(Self.schedule(&timers, "c", due: 50).wait == .arm(due: 50))
        #expect(timers.remove(TimerKey(room: "r", name: "b")) == .keep)
        #expect(timers.remove(TimerKey(room: "r", name: "c")) == .arm(due: 300))
        #expect(timers.remove(TimerKey(room: "r", name: "a")) == .cancel)
        #expect(timers.armed == nil)
    }

    @Test func timersScheduledTogetherKeepTheirOrderAndFollowTheClock() {
        var timers = TimerSchedule()
        let first = Self.schedule(&timers, "a", due: 10, now: 5).timer
        let second = Self.schedule(&timers, "b", due: 10, now: 5).timer
        let later = Self.schedule(&timers, "c", due: 10, now: 9).timer
        #expect(first.order == 5_000)
        #expect(second.order == 5_001)
        #expect(later.order == 9_000)
    }

    @Test func dueTimersGoToTheirRoomsInOrderAndARoomBeingReadGetsItsOwnInOrder() {
        var timers = TimerSchedule()
        let a = Self.schedule(&timers, "a", room: "here", due: 10).timer
        let b = Self.schedule(&timers, "b", room: "away", due: 11).timer
        let c = Self.schedule(&timers, "c", room: "away", due: 12).timer
        let d = Self.schedule(&timers, "d", room: "away", due: 30).timer
        let first = timers.waitEnded(now: 12) { $0 == "here" }
        #expect(first.deliveries == [.fire(a), .readRoom("away")])
        #expect(first.wait == .arm(due: 30))
        // `d` comes due while `away` is still being read: it waits behind the others.
        let second = timers.waitEnded(now: 30) { $0 == "here" }
        #expect(second.deliveries.isEmpty)
        // The wait that ended was the last: none is armed.
        #expect(second.wait == .keep)
        #expect(timers.armed == nil)
        #expect(timers.roomRead("away", found: true) == [b, c, d])
        #expect(timers.roomRead("away", found: true).isEmpty)
    }

    @Test func timersOfARoomThatCannotBeReadWaitInTheBookForTheNextTry() {
        var timers = TimerSchedule()
        let b = Self.schedule(&timers, "b", room: "away", due: 11).timer
        #expect(timers.waitEnded(now: 20) { _ in false }.deliveries == [.readRoom("away")])
        #expect(timers.roomRead("away", found: false).isEmpty)
        #expect(timers.rearm() == .arm(due: 11))
        #expect(timers.waitEnded(now: 21) { _ in true }.deliveries == [.fire(b)])
    }

    @Test func aTimerHandedToItsRoomAndNeverFiredIsHandedOverAgainWhenStorageListsIt() {
        var timers = TimerSchedule()
        let a = Self.schedule(&timers, "a", due: 10).timer
        #expect(timers.waitEnded(now: 10) { _ in true }.deliveries == [.fire(a)])
        // Storage lists it again (the next poll): its write never came.
        #expect(timers.load([a]) == .arm(due: 10))
        #expect(timers.waitEnded(now: 11) { _ in true }.deliveries == [.fire(a)])
        // Fired this time: taken out of the book. Listed again before its removal is stored, it goes back in, and
        // the room's write skips it (its row is gone).
        #expect(timers.remove(TimerKey(room: "r", name: "a")) == .keep)
        #expect(timers.load([]) == .keep)
        // A timer listed as it is pending, not handed over, is not doubled.
        let b = Self.schedule(&timers, "b", due: 40).timer
        #expect(timers.load([b]) == .keep)
        #expect(timers.waitEnded(now: 40) { _ in true }.deliveries == [.fire(b)])
    }

    /// After a failed write, a room's timers leave the book until storage's are read again; what the room scheduled
    /// or removed meanwhile stays as the book has it, and a read a later failure overtook changes nothing.
    @Test func aRoomsTimersAreForgottenThenReadAgainWithoutUndoingWhatCameSince() {
        var timers = TimerSchedule()
        let stored = Self.schedule(&timers, "stored", due: 100).timer
        let cancelled = Self.schedule(&timers, "cancelled", due: 110).timer
        _ = Self.schedule(&timers, "lost", due: 50)
        let other = Self.schedule(&timers, "other", room: "elsewhere", due: 200).timer
        let (read, wait) = timers.forget(room: "r")
        #expect(timers.book.pending(in: "r").isEmpty)
        #expect(wait == .arm(due: 200))
        // Meanwhile the room is read again and one of its timers is cancelled, another scheduled.
        _ = timers.remove(TimerKey(room: "r", name: "cancelled"))
        let fresh = Self.schedule(&timers, "fresh", due: 150).timer
        #expect(timers.reread("r", read: read, stored: [stored, cancelled]) == .arm(due: 100))
        #expect(timers.book.pending(in: "r") == [stored, fresh])
        #expect(timers.book.pending(in: "elsewhere") == [other])

        let (overtaken, _) = timers.forget(room: "r")
        let (latest, _) = timers.forget(room: "r")
        #expect(timers.reread("r", read: overtaken, stored: [stored]) == .keep)
        #expect(timers.book.pending(in: "r").isEmpty)
        _ = timers.reread("r", read: latest, stored: [stored])
        #expect(timers.book.pending(in: "r") == [stored])
    }
}
