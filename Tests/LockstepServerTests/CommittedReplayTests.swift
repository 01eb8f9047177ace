import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepStorage
import Testing

/// A room's copy following what other servers committed, and taken back over a batch that was not, with no server.
struct CommittedReplayTests {
    /// Another server's copy of a counter room and its stored rows of `count` increments.
    static func committed(_ count: Int) throws -> [StoredChange] {
        var store = App.counter.makeStore(undoDepth: 10)
        var timeline = RoomTimeline(window: 10)
        return try RoomTurnTests.increments(count, on: &store, timeline: &timeline)
    }

    @Test func aCopyAppliesWhatFollowsItAndKeepsEachInverse() throws {
        let rows = try Self.committed(4)
        var store = App.counter.makeStore(undoDepth: 10)
        var timeline = RoomTimeline(window: 10)
        let first = CommittedReplay.apply(Array(rows[0...1]), to: &store, timeline: &timeline, app: .counter)
        #expect(first.failure == nil && first.applied.map(\.version) == [1, 2])
        // What the copy has is skipped; the rest follows.
        let second = CommittedReplay.apply(rows, to: &store, timeline: &timeline, app: .counter)
        #expect(second.failure == nil && second.applied.map(\.version) == [3, 4])
        #expect(try store.version == 4 && store.stateJSON() == ["count": 4])
        #expect(timeline.oldestVersion == 1)
        #expect(try timeline.state(at: 1, from: store.stateJSON(), current: 4, older: []) == ["count": 1])
        let nothing = CommittedReplay.apply(rows, to: &store, timeline: &timeline, app: .counter)
        #expect(nothing.failure == nil && nothing.applied.isEmpty)
    }

    @Test func aGapOrADamagedRecordStopsTheCopy() throws {
        let rows = try Self.committed(4)
        var store = App.counter.makeStore(undoDepth: 10)
        var timeline = RoomTimeline(window: 10)
        let gap = CommittedReplay.apply(Array(rows[2...]), to: &store, timeline: &timeline, app: .counter)
        #expect(gap.applied.isEmpty && gap.failure?.contains("does not follow") == true)
        #expect(store.version == 0)

        var damaged = rows
        damaged[1] = StoredChange(room: "r", version: 2, message: rows[1].message, record: Array("{".utf8))
        let broken = CommittedReplay.apply(damaged, to: &store, timeline: &timeline, app: .counter)
        #expect(broken.failure != nil)
        #expect(broken.applied.count < 4)
    }

    @Test func whatIsPublishedIsEachAppliedChangeAndNothingPastABreak() throws {
        let rows = try Self.committed(3)
        var store = App.counter.makeStore(undoDepth: 10)
        var timeline = RoomTimeline(window: 10)
        var views = RoomViews(resumeWindow: 10)
        let published = CommittedReplay.publish(
            Array(rows[0...1]), to: &store, timeline: &timeline, views: &views, app: .counter)
        #expect(published.failure == nil)
        #expect(published.patches.map(\.version) == [1, 2])
        #expect(try store.stateJSON() == ["count": 2])

        // A stored change that is not a patch reaches no client: the copy is read again.
        var notAPatch = rows
        notAPatch[2] = StoredChange(room: "r", version: 3, message: Array("{}".utf8), record: rows[2].record)
        let broken = CommittedReplay.publish(notAPatch, to: &store, timeline: &timeline, views: &views, app: .counter)
        #expect(broken.patches.isEmpty)
        #expect(broken.failure?.contains("version 3") == true)
    }

    @Test func aBatchTakenBackLeavesTheStoreTimelineAndMarksAsBefore() throws {
        var store = App.counter.makeStore(undoDepth: 10)
        var timeline = RoomTimeline(window: 10)
        _ = try RoomTurnTests.increments(2, on: &store, timeline: &timeline)
        var marks = SessionMarks()
        for mark in RoomTurnTests.moved(by: .ack(id: "a", version: 1), seq: 1, session: "s1", marks: &marks) {
            marks.stored(mark)
        }

        store.setHistoryCheckpoint()
        let batch = try RoomTurnTests.increments(2, on: &store, timeline: &timeline)
        let moved = RoomTurnTests.moved(by: .ack(id: "b", version: 4), seq: 2, session: "s1", marks: &marks)
        #expect(marks.covers(2, of: "s1"))

        try StoreRollback.takeBack(
            batch, marks: moved, to: 2, store: &store, timeline: &timeline, marks: &marks, app: .counter)
        #expect(try store.version == 2 && store.stateJSON() == ["count": 2])
        #expect(store.history.undoCount == 2)
        #expect(timeline.steps.map(\.version) == [1, 2])
        #expect(!marks.covers(2, of: "s1") && marks.covers(1, of: "s1"))
    }
}
