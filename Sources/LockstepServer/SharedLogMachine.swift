#if LOCKSTEP_MUTANTS
import LockstepCore
#endif

/// The decisions of one room in a log several servers share (``SharedLogPipeline``): when the room writes, what a
/// locked write may apply, what a failed write takes back and how its requests are answered, when the room catches up
/// with what other servers committed. No I/O: each event returns what the pipeline must do, and the pipeline only
/// carries that out (tasks, storage calls, applying to the room, replies).
///
/// A room has one write at a time: everything received while a write is in flight goes into the next one. A reply
/// leaves only after every write before it. A locked write applies its batch at most once, and only while the
/// server still waits for it; a write that fails takes back what it applied.
struct SharedLogMachine: Equatable, Sendable {
    /// What waits in the room's queue for its turn.
    enum Waiting: Equatable, Sendable {
        case nothing
        /// Only replies: they go out once the writes before them are done.
        case replies
        /// A change request, an effect's action or a timer (and maybe replies after it): the next write takes it all.
        case inputs
    }

    /// The room's locked write in flight.
    struct Write: Equatable, Sendable {
        enum Phase: Equatable, Sendable {
            /// Handed to storage; its `prepare` has not run.
            case sent
            /// Its `prepare` runs: what other servers committed is applied first.
            case preparing
            /// The batch is being applied on top of version `from`: replies made meanwhile go with the write.
            case applying(from: Int)
            /// The batch is applied on top of version `from`, and not committed yet.
            case applied(from: Int)
        }

        /// Numbers the room's writes: a `prepare` of an earlier one (given up on) applies nothing.
        let attempt: Int
        var phase: Phase

        /// The version the applied batch started from, when `prepare` got as far as applying it.
        var batchBase: Int? {
            switch phase {
            case .sent, .preparing: nil
            case .applying(let version), .applied(let version): version
            }
        }
    }

    /// What the room's pump (its one task of writes and catch-ups) is doing.
    enum Pump: Equatable, Sendable {
        case stopped
        /// Started, or back from a step: it asks ``next(roomActive:hasWrites:version:)`` what to do.
        case running
        case writing
        case catchingUp
        /// A catch-up failed: it waits before trying again.
        case waitingToRetry
    }

    /// Whether the pipeline must start the pump.
    enum Wake: Equatable, Sendable {
        case startPump
        case alreadyRunning
    }

    /// The pump's next step.
    enum Step: Equatable, Sendable {
        /// One locked write of everything waiting, numbered `attempt`.
        case startWrite(attempt: Int)
        /// Answer the replies waiting: nothing before them waits any more.
        case flushReplies
        /// Read what other servers committed (``catchUpFinished(failed:)`` when done).
        case startCatchUp
        /// Nothing waits: the pump ends, and the room may go idle.
        case idle
    }

    /// Where a reply goes.
    enum ReplyAction: Equatable, Sendable {
        /// Out now: nothing of the room waits or is being written.
        case answerNow
        /// With the write being prepared, once it is committed.
        case holdWithWrite
        /// Into the queue, after what waits there.
        case queue(Wake)
    }

    /// What a locked write's `prepare` does.
    enum PrepareAction: Equatable, Sendable {
        /// Apply what other servers committed, then (``applyingBatch(from:)``) the batch.
        case apply
        /// Nothing: the server gave up on this attempt, or already prepared it.
        case applyNothing
    }

    /// What the end of a write asks for.
    enum WriteEnd: Equatable, Sendable {
        /// Committed: release what it held back; the batch stays.
        case release
        /// Nothing was committed: its requests are answered `unavailable`; a batch applied on top of `rollBackTo`
        /// is taken back first.
        case answerUnavailable(rollBackTo: Int?)
        /// Whether it was committed is unknown: its senders are sent away to resume (or told to send again), since
        /// `unavailable` would say that nothing was stored; a batch applied is taken back as above, and a catch-up
        /// brings it back if it was committed after all.
        case sendAway(rollBackTo: Int?)
    }

    /// Whether a catch-up applies what other servers committed.
    enum CatchUpDecision: Equatable, Sendable {
        /// Read (or apply what was read) now.
        case apply
        /// Not now: the pump checks again once the room's own write has settled (and must start when `Wake` says).
        case checkLater(Wake)
    }

    /// What the pump does after its catch-up.
    enum CatchUpAction: Equatable, Sendable {
        /// Go on: ask for the next step.
        case next
        /// Wait `after`, then ``retryDue()``.
        case retryCatchUp(after: Duration)
    }

    /// How long a failed catch-up waits before the next try.
    static let retryDelay = Duration.milliseconds(500)

    private(set) var waiting = Waiting.nothing
    private(set) var write: Write?
    /// Writes started so far.
    private(set) var attempts = 0
    private(set) var pump = Pump.stopped
    /// Other servers' commits are being read beside the room's own writes.
    private(set) var following = false
    /// The room's version when following last read: it goes on only while each read moves the room.
    private(set) var followReached = -1
    /// The newest version other servers announced.
    private(set) var announced = 0
    /// The database must be asked what the room missed: it was loaded, a batch was taken back, notices may have been
    /// lost, or a catch-up failed or was deferred.
    private(set) var needsCheck = false

    // MARK: - Queries

    /// No batch of the room's own is applied and uncommitted: what other servers committed may be applied.
    var mayApplyCommitted: Bool {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.joinSeesUncommittedBatch) { return true }
        #endif
        return write?.batchBase == nil
    }

    /// Versions other servers committed may be missing.
    func isBehind(version: Int) -> Bool { needsCheck || announced > version }

    /// Nothing this server received waits to be applied, written or answered (`writesIdle`: the room's held-back
    /// patches and replies are all out).
    func isSettled(writesIdle: Bool) -> Bool { waiting == .nothing && write == nil && writesIdle }

    /// Nothing waits or runs.
    var isIdle: Bool { pump == .stopped && !following && waiting == .nothing }

    // MARK: - Requests and replies

    /// The pump should run (something arrived, or may have been missed).
    mutating func wake() -> Wake {
        guard pump == .stopped else { return .alreadyRunning }
        pump = .running
        return .startPump
    }

    /// Something was queued: an input that needs a write, or a reply.
    mutating func received(needsWrite: Bool) -> Wake {
        if needsWrite {
            waiting = .inputs
        } else if waiting == .nothing {
            waiting = .replies
        }
        return wake()
    }

    /// A reply is ready; `writesIdle` says that the room holds nothing back.
    ///
    /// A write in flight holds replies back even before its `prepare` runs: what it writes was received before them.
    mutating func replyReady(writesIdle: Bool) -> ReplyAction {
        if case .applying = write?.phase { return .holdWithWrite }
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.replyBeforeWrite), waiting == .nothing, writesIdle { return .answerNow }
        #endif
        if waiting == .nothing, write == nil, writesIdle { return .answerNow }
        return .queue(received(needsWrite: false))
    }

    // MARK: - The pump

    /// The pump asks what to do next: write if anything needs a write (`hasWrites`: marks, snapshots or timers are
    /// left to store), else answer replies, else catch up when behind `version`, else stop. A room dropped or a server
    /// stopped (`roomActive` false) stops it.
    mutating func next(roomActive: Bool, hasWrites: Bool, version: Int) -> Step {
        precondition(pump == .running, "the pump asks for a step only between steps")
        guard roomActive else {
            pump = .stopped
            return .idle
        }
        if waiting == .inputs || hasWrites {
            attempts += 1
            write = Write(attempt: attempts, phase: .sent)
            waiting = .nothing
            pump = .writing
            return .startWrite(attempt: attempts)
        }
        if waiting == .replies {
            waiting = .nothing
            return .flushReplies
        }
        if isBehind(version: version), mayApplyCommitted {
            needsCheck = false
            pump = .catchingUp
            return .startCatchUp
        }
        pump = .stopped
        return .idle
    }

    /// A catch-up reads, or applies what it read, after version `after`; the room is at `version` (the two are the
    /// same before the read). Neither while a batch of the room's own is applied and uncommitted, nor over a batch
    /// taken back while the read ran (the room went below `after`): what was read may not follow the room's copy.
    mutating func catchUp(after: Int, version: Int) -> CatchUpDecision {
        guard mayApplyCommitted, version >= after else {
            needsCheck = true
            return .checkLater(wake())
        }
        return .apply
    }

    /// The pump's catch-up ended; `failed` when the database could not be read.
    mutating func catchUpFinished(failed: Bool) -> CatchUpAction {
        precondition(pump == .catchingUp, "no catch-up of the pump's is running")
        guard failed else {
            pump = .running
            return .next
        }
        pump = .waitingToRetry
        return .retryCatchUp(after: Self.retryDelay)
    }

    /// The wait after a failed catch-up is over: the room checks again.
    mutating func retryDue() {
        precondition(pump == .waitingToRetry, "no retry is due")
        needsCheck = true
        pump = .running
    }

    // MARK: - The locked write

    /// Storage holds the room for write `attempt` and calls its `prepare`.
    mutating func prepareCalled(attempt: Int) -> PrepareAction {
        #if LOCKSTEP_MUTANTS
        let anyAttempt = Mutant.isActive(.staleAttemptApplies)
        #else
        let anyAttempt = false
        #endif
        guard var write, write.attempt == attempt || anyAttempt, write.phase == .sent else { return .applyNothing }
        write.phase = .preparing
        self.write = write
        return .apply
    }

    /// Other servers' commits are applied; the room, at `version`, now applies the batch.
    mutating func applyingBatch(from version: Int) {
        precondition(write?.phase == .preparing, "a batch is applied only in its write's prepare")
        write?.phase = .applying(from: version)
    }

    /// The batch is applied; the write goes on to commit it.
    mutating func batchApplied() {
        guard case .applying(let version) = write?.phase else {
            preconditionFailure("no batch is being applied")
        }
        write?.phase = .applied(from: version)
    }

    /// The write is committed.
    mutating func writeFinished() -> WriteEnd {
        precondition(write != nil && pump == .writing, "no write is in flight")
        write = nil
        pump = .running
        return .release
    }

    /// The write failed; `uncertain` when its commit was sent and not answered.
    mutating func writeFailed(uncertain: Bool) -> WriteEnd {
        precondition(write != nil && pump == .writing, "no write is in flight")
        let base = write?.batchBase
        write = nil
        pump = .running
        // What was taken back may have been committed after all: the database says.
        if base != nil { needsCheck = true }
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.uncertainAnsweredUnavailable) { return .answerUnavailable(rollBackTo: base) }
        #endif
        return uncertain ? .sendAway(rollBackTo: base) : .answerUnavailable(rollBackTo: base)
    }

    // MARK: - Other servers

    /// Another server committed the room up to `version`.
    mutating func announced(version: Int) {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.announcedIgnored) { return }
        #endif
        announced = max(announced, version)
    }

    /// The room may have missed commits: it was just loaded, notices may have been lost, or a catch-up found a batch
    /// of its own applied and left the check for later.
    mutating func mayHaveMissed() {
        needsCheck = true
    }

    /// Following (catching up beside the room's own writes, so its clients see other servers' commits while its next
    /// write waits for the room's lock) starts only while the pump runs, and once at a time.
    mutating func startFollowing() -> Bool {
        guard pump != .stopped, !following else { return false }
        following = true
        followReached = -1
        return true
    }

    /// Whether following reads again: while the room (at `version`, still in memory when `roomActive`) is behind
    /// what was announced and the last read moved it. Following stops otherwise.
    mutating func followsOn(version: Int, roomActive: Bool) -> Bool {
        guard roomActive, announced > version, version > followReached else {
            following = false
            return false
        }
        followReached = version
        return true
    }

    /// Following stopped: its read failed or was deferred.
    mutating func followingFinished() {
        following = false
    }
}
