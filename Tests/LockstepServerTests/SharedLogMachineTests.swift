import LockstepCore
@testable import LockstepServer
import LockstepTestSupport
import Testing

/// The shared log's write, catch-up and rollback decisions, with no database: every sequence of events up to a
/// depth, long seeded random walks, and each transition on its own.
@Suite struct SharedLogMachineTests {
    // MARK: - Every sequence

    /// Visits every sequence of `depth` events from `simulation`, checking the invariants after each event and that
    /// the room settles (idle, every input answered, caught up with what was announced) from every state reached.
    /// Returns the number of states visited and the violations found.
    static func explore(_ simulation: SharedLogSimulation, depth: Int) -> (states: Int, violations: [String]) {
        var settled = simulation
        settled.settle()
        var states = 1
        var violations = settled.violations
        guard violations.isEmpty, depth > 0 else { return (states, violations) }
        for event in simulation.enabled {
            var next = simulation
            next.happen(event)
            if !next.violations.isEmpty { return (states, next.violations) }
            let below = explore(next, depth: depth - 1)
            states += below.states
            violations += below.violations
            if !violations.isEmpty { break }
        }
        return (states, violations)
    }

    // The searches run on threads of their own: minutes of CPU on the two threads of the task pool would hold back
    // every other test of the run.
    @Test func everySequenceOfSixEventsKeepsTheInvariantsAndSettles() async throws {
        let (states, violations) = try await offThePool { Self.explore(SharedLogSimulation(), depth: 6) }
        #expect(violations.isEmpty, "\(violations.first ?? "")")
        // Every event kind was reachable: the search is not trivially small.
        #expect(states > 200_000)
    }

    /// Requests, replies and writes only, deeper: three requests and two replies through every way a write can end.
    @Test func everySequenceOfEightRequestAndWriteEventsKeepsTheInvariantsAndSettles() async throws {
        let budget = SharedLogSimulation.Budget(
            inputs: 3, replies: 2, otherCommits: 0, leftovers: 1, drops: 0, joins: 0, brokenLogs: 0, checks: 0)
        let (states, violations) = try await offThePool { Self.explore(SharedLogSimulation(budget: budget), depth: 8) }
        #expect(violations.isEmpty, "\(violations.first ?? "")")
        #expect(states > 90_000)
    }

    @Test(arguments: 0..<8) func aSeededRandomWalkKeepsTheInvariantsAndSettles(seed: Int) {
        var random = SeededRandom(epoch: "shared log", version: seed)
        let plenty = 1_000_000
        var simulation = SharedLogSimulation(
            budget: .init(
                inputs: plenty, replies: plenty, otherCommits: plenty, leftovers: plenty, drops: 0, joins: plenty,
                brokenLogs: 0, checks: plenty))
        var steps = 0
        while steps < 3_000, simulation.violations.isEmpty {
            let events = simulation.enabled
            simulation.happen(events[Int.random(in: 0..<events.count, using: &random)])
            steps += 1
            if steps % 100 == 0 {
                var settled = simulation
                settled.settle()
                #expect(settled.violations.isEmpty, "seed \(seed): \(settled.violations.first ?? "")")
                // The walk goes on from where the room settled, so requests keep getting answered.
                simulation = settled
                simulation.trace = []
            }
        }
        #expect(simulation.violations.isEmpty, "seed \(seed): \(simulation.violations.first ?? "")")
        #expect(simulation.queue.machine.attempts > 100)
    }

    // MARK: - Requests and replies

    @Test func theFirstRequestStartsThePumpAndLaterOnesJoinIt() {
        var machine = SharedLogMachine()
        #expect(machine.received(needsWrite: true) == .startPump)
        #expect(machine.received(needsWrite: true) == .alreadyRunning)
        #expect(machine.received(needsWrite: false) == .alreadyRunning)
        #expect(machine.waiting == .inputs)
    }

    @Test func aReplyWithNothingBeforeItGoesAtOnce() {
        var machine = SharedLogMachine()
        #expect(machine.replyReady(writesIdle: true) == .answerNow)
        #expect(machine.replyReady(writesIdle: false) == .queue(.startPump))
    }

    @Test func aReplyWaitsForAWriteInFlightEvenBeforeItsPrepare() {
        var machine = SharedLogMachine()
        let attempt = Self.startWrite(&machine)
        #expect(machine.replyReady(writesIdle: true) == .queue(.alreadyRunning))
        #expect(machine.waiting == .replies)
        #expect(machine.prepareCalled(attempt: attempt) == .apply)
        machine.applyingBatch(from: 0)
        #expect(machine.replyReady(writesIdle: false) == .holdWithWrite)
        machine.batchApplied()
        #expect(machine.replyReady(writesIdle: false) == .queue(.alreadyRunning))
    }

    // MARK: - The pump

    @Test func thePumpWritesFirstThenAnswersRepliesThenCatchesUpThenStops() {
        var machine = SharedLogMachine()
        _ = machine.received(needsWrite: true)
        machine.announced(version: 3)
        #expect(machine.next(roomActive: true, hasWrites: false, version: 0) == .startWrite(attempt: 1))
        _ = machine.replyReady(writesIdle: true)
        #expect(machine.writeFinished() == .release)
        #expect(machine.next(roomActive: true, hasWrites: false, version: 1) == .flushReplies)
        #expect(machine.next(roomActive: true, hasWrites: false, version: 1) == .startCatchUp)
        #expect(machine.catchUpFinished(failed: false) == .next)
        #expect(machine.next(roomActive: true, hasWrites: false, version: 3) == .idle)
        #expect(machine.isIdle)
    }

    @Test func somethingLeftToStoreIsWrittenWithNoRequestWaiting() {
        var machine = SharedLogMachine()
        _ = machine.wake()
        #expect(machine.next(roomActive: true, hasWrites: true, version: 0) == .startWrite(attempt: 1))
    }

    @Test func aDroppedRoomStopsThePumpWhateverWaits() {
        var machine = SharedLogMachine()
        _ = machine.received(needsWrite: true)
        #expect(machine.next(roomActive: false, hasWrites: true, version: 0) == .idle)
        #expect(machine.pump == .stopped)
    }

    @Test func aFailedCatchUpIsRetriedAfterHalfASecond() {
        var machine = SharedLogMachine()
        machine.mayHaveMissed()
        _ = machine.wake()
        #expect(machine.next(roomActive: true, hasWrites: false, version: 0) == .startCatchUp)
        #expect(!machine.needsCheck)
        #expect(machine.catchUpFinished(failed: true) == .retryCatchUp(after: .milliseconds(500)))
        // Requests arriving meanwhile wait for the retry: the pump is busy.
        #expect(machine.received(needsWrite: true) == .alreadyRunning)
        machine.retryDue()
        #expect(machine.needsCheck)
        #expect(machine.next(roomActive: true, hasWrites: false, version: 0) == .startWrite(attempt: 1))
    }

    // MARK: - The locked write

    @Test func onlyTheAttemptInFlightIsPreparedAndOnlyOnce() {
        var machine = SharedLogMachine()
        let first = Self.startWrite(&machine)
        #expect(machine.writeFailed(uncertain: false) == .answerUnavailable(rollBackTo: nil))
        let second = Self.startWrite(&machine)
        #expect(machine.prepareCalled(attempt: first) == .applyNothing)
        #expect(machine.prepareCalled(attempt: second) == .apply)
        #expect(machine.prepareCalled(attempt: second) == .applyNothing)
    }

    @Test func aWriteThatFailsBeforeItsBatchIsAppliedTakesNothingBack() {
        var machine = SharedLogMachine()
        let attempt = Self.startWrite(&machine)
        #expect(machine.prepareCalled(attempt: attempt) == .apply)
        // Other servers' commits could not be followed: the batch was never applied.
        #expect(machine.writeFailed(uncertain: true) == .sendAway(rollBackTo: nil))
        #expect(!machine.needsCheck)
    }

    @Test func aFailedWriteTakesBackTheBatchItAppliedAndChecksTheDatabase() {
        var machine = SharedLogMachine()
        let attempt = Self.startWrite(&machine)
        #expect(machine.prepareCalled(attempt: attempt) == .apply)
        machine.applyingBatch(from: 7)
        machine.batchApplied()
        #expect(!machine.mayApplyCommitted)
        #expect(machine.writeFailed(uncertain: false) == .answerUnavailable(rollBackTo: 7))
        #expect(machine.needsCheck)
        #expect(machine.mayApplyCommitted)
    }

    @Test func anUncertainCommitSendsItsSendersAwayAndTakesTheBatchBack() {
        var machine = SharedLogMachine()
        let attempt = Self.startWrite(&machine)
        _ = machine.prepareCalled(attempt: attempt)
        machine.applyingBatch(from: 2)
        machine.batchApplied()
        #expect(machine.writeFailed(uncertain: true) == .sendAway(rollBackTo: 2))
        #expect(machine.needsCheck)
    }

    @Test func aCommittedWriteReleasesAndLeavesNothingToCheck() {
        var machine = SharedLogMachine()
        let attempt = Self.startWrite(&machine)
        _ = machine.prepareCalled(attempt: attempt)
        machine.applyingBatch(from: 0)
        machine.batchApplied()
        #expect(machine.writeFinished() == .release)
        #expect(machine.write == nil)
        #expect(!machine.isBehind(version: 1))
        #expect(machine.isSettled(writesIdle: true))
        #expect(!machine.isSettled(writesIdle: false))
    }

    // MARK: - Other servers

    @Test func anAnnouncedVersionAheadMakesTheRoomBehindUntilItHoldsIt() {
        var machine = SharedLogMachine()
        machine.announced(version: 5)
        machine.announced(version: 3)
        #expect(machine.announced == 5)
        #expect(machine.isBehind(version: 4))
        #expect(!machine.isBehind(version: 5))
    }

    @Test func followingStartsOnlyWhileThePumpRunsAndOnceAtATime() {
        var machine = SharedLogMachine()
        #expect(machine.startFollowing() == false)
        _ = machine.wake()
        #expect(machine.startFollowing() == true)
        #expect(machine.startFollowing() == false)
        #expect(!machine.isIdle)
        machine.followingFinished()
        #expect(machine.startFollowing() == true)
    }

    @Test func aCatchUpWaitsWhileABatchIsAppliedAndNotCommitted() {
        var machine = SharedLogMachine()
        let attempt = Self.startWrite(&machine)
        #expect(machine.mayApplyCommitted)
        _ = machine.prepareCalled(attempt: attempt)
        machine.applyingBatch(from: 0)
        #expect(!machine.mayApplyCommitted)
        machine.batchApplied()
        #expect(!machine.mayApplyCommitted)
        _ = machine.writeFinished()
        #expect(machine.mayApplyCommitted)
    }

    @Test func aCatchUpDefersToThePumpWhileABatchIsUncommittedOrAfterTheRoomWentBack() {
        var machine = SharedLogMachine()
        #expect(machine.catchUp(after: 4, version: 4) == .apply)
        // The room went back below what the read started from (a batch taken back while it ran).
        #expect(machine.catchUp(after: 4, version: 3) == .checkLater(.startPump))
        #expect(machine.needsCheck)
        let attempt = Self.startWrite(&machine)
        _ = machine.prepareCalled(attempt: attempt)
        machine.applyingBatch(from: 3)
        // The pump runs (it is writing): it checks once the write settles.
        #expect(machine.catchUp(after: 3, version: 4) == .checkLater(.alreadyRunning))
    }

    @Test func followingReadsAgainOnlyWhileBehindAndMoving() {
        var machine = SharedLogMachine()
        _ = machine.wake()
        machine.announced(version: 9)
        #expect(machine.startFollowing() == true)
        #expect(machine.followsOn(version: 2, roomActive: true) == true)
        // The read moved the room: again.
        #expect(machine.followsOn(version: 5, roomActive: true) == true)
        // It did not: following stops, and may start again.
        #expect(machine.followsOn(version: 5, roomActive: true) == false)
        #expect(!machine.following)
        #expect(machine.startFollowing() == true)
        #expect(machine.followsOn(version: 5, roomActive: true) == true)
        #expect(machine.followsOn(version: 9, roomActive: true) == false)
        #expect(machine.startFollowing() == true)
        #expect(machine.followsOn(version: 6, roomActive: false) == false)
        #expect(!machine.following)
    }

    @Test func thePumpDoesNotCatchUpWhileAskedToWrite() {
        var machine = SharedLogMachine()
        machine.mayHaveMissed()
        _ = machine.received(needsWrite: true)
        #expect(machine.next(roomActive: true, hasWrites: false, version: 0) == .startWrite(attempt: 1))
        #expect(machine.needsCheck)
    }

    /// Starts a write of one request and returns its attempt.
    static func startWrite(_ machine: inout SharedLogMachine) -> Int {
        _ = machine.received(needsWrite: true)
        guard case .startWrite(let attempt) = machine.next(roomActive: true, hasWrites: false, version: 0) else {
            Issue.record("no write started")
            return 0
        }
        return attempt
    }
}
