@testable import LockstepServer
import Testing

/// When a room's presence goes out and what it says, with no clock: the first at once, then at most one per
/// interval, whatever happened in between merged into it.
@Suite struct PresenceThrottleTests {
    @Test func theFirstGoesAtOnceAndTheNextWaitsItsIntervalFromTheLast() {
        var throttle = PresenceThrottle()
        #expect(throttle.joinedOrLeft(interval: .seconds(1)) == .zero)
        // Already waiting: no second wait.
        #expect(throttle.joinedOrLeft(interval: .seconds(1)) == nil)
        #expect(throttle.due() == .everyone)
        throttle.sent(at: .seconds(10))
        #expect(throttle.statesChanged(["c1"], interval: .seconds(2)) == .seconds(12))
        #expect(throttle.statesChanged(["c2", "c1"], interval: .seconds(2)) == nil)
        #expect(throttle.due() == .changed(["c1", "c2"]))
        #expect(throttle.due() == .nothing)
    }

    @Test func aJoinOrLeaveMakesItTheFullListStatesIncluded() {
        var throttle = PresenceThrottle()
        _ = throttle.statesChanged(["c1"], interval: .seconds(1))
        _ = throttle.joinedOrLeft(interval: .seconds(1))
        #expect(throttle.due() == .everyone)
        // The states went out with the list.
        #expect(throttle.changedStates.isEmpty)
        #expect(!throttle.isScheduled)
    }

    @Test func aPresenceThatListedNobodyDoesNotHoldTheNextBack() {
        var throttle = PresenceThrottle()
        throttle.sent(at: .seconds(5))
        _ = throttle.statesChanged(["far"], interval: .seconds(1))
        // The server found none of them in the list it sends, and sent nothing: the last stays at 5.
        #expect(throttle.due() == .changed(["far"]))
        #expect(throttle.joinedOrLeft(interval: .seconds(1)) == .seconds(6))
    }
}
