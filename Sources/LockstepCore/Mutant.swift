#if LOCKSTEP_MUTANTS
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Planted bugs for the cluster simulation (`make simulate-mutants`): each one breaks a rule the simulation's
/// invariants guard, so a run that does not catch it shows a check that cannot fail. Compiled only with
/// `-DLOCKSTEP_MUTANTS`; one is chosen per process run by the environment variable `LOCKSTEP_MUTANT`, read on each
/// question so that one process can try them in turn.
public enum Mutant: String, CaseIterable, Sendable {
    /// `SharedLogMachine.prepareCalled`: the `prepare` of a write the server gave up on applies the batch in flight.
    case staleAttemptApplies
    /// `SharedLogMachine.replyReady`: a reply leaves while a write received before it is still in flight.
    case replyBeforeWrite
    /// `SharedLogMachine.writeFailed`: a write whose commit went unanswered is answered `unavailable`, though it may
    /// be stored.
    case uncertainAnsweredUnavailable
    /// `SharedLogMachine.announced`: other servers' notices are ignored, so a room follows only when it writes.
    case announcedIgnored
    /// `SharedLogMachine.mayApplyCommitted`: says yes while a batch of the room's own is applied and uncommitted, so
    /// a joining client is answered with changes that are not committed.
    case joinSeesUncommittedBatch
    /// `StoreRollback.rollingBack`: a batch taken back leaves its entries in the undo history.
    case rollbackKeepsHistory
    /// `SessionMarks.adopt`: marks another server stored are not adopted, so a request sent again is applied again.
    case marksNotAdopted
    /// In the simulation's own join (not in the server): the client is answered from the copy as it is, without
    /// the catch-up first.
    case joinWithoutCatchUp
    /// In the simulation's own connections (not in the server): one patch in fifty is lost on its way.
    case lostPatch
    /// In the simulation's model of a timer's firing write (not in the server): a fired timer's row is removed in a
    /// write of its own after the one that stores its change, so a server dying in between leaves it to fire again.
    case firedTimerRowRemovedSeparately
    /// `SessionMarks.refused`: a request answered `unavailable` is not remembered, so a later one applied covers it.
    case unavailableNotAHole
    /// `SessionMarks.rollBack`: refusals that the requests taken back had made holes of are forgotten, so a later
    /// request stored covers them and a client that sends one again is told it was applied.
    case rollBackForgetsRefusals
    /// `SharedRoomQueue.writeFailed`: the requests a connection sent after one whose commit went unanswered stay
    /// queued and are applied, so its session's mark passes one that may be lost.
    case queuedAfterUncertainApplied
    /// `SharedRoomQueue.writeFailed`: a connection whose request may or may not be stored is sent away only after
    /// the batch's replies, so a reply to a later request reaches it before the one it sent first is answered.
    case awayAfterReplies
    /// In the simulation's model of a timer's firing write (not in the server): a server fires a timer from its book
    /// without checking, under the room's lock, that the log still holds its row.
    case timerFiresWithoutRowCheck
    /// `TimerSchedule.load`: a timer handed to its room whose turn never fired it (a write given up on before its
    /// lock) is not handed over again when storage lists it again, so it never fires.
    case handedOverTimerNotReloaded
    /// `PresenceExchange.read`: a notice that came during a read of the other servers' peers does not have them read
    /// again, so what they published then is missed until the next notice.
    case staleReadNotRepeated
    /// `PresencePublication.published`: a publication the database refused counts as stored, so it is not made again.
    case failedPublicationForgotten
    /// In the simulation's model of publishing presence (not in the server): each copy of a room in memory publishes
    /// its own clients, so a copy that left memory publishes after its wait over the later copy's clients.
    case publicationPerRoomCopy
    /// `RoomTurn.answerInstead`: a request whose idempotency key was used is applied again, so a backend's request
    /// sent again after a lost answer is applied twice.
    case idempotencyKeyIgnored
    /// `RoomViews.project`: a change's action stays in the cause a view's reader gets, though the change wrote what
    /// that reader may not see.
    case hiddenActionShown
    /// `RoomViews.project`: a move or copy gets no form of its own for each reader, so an owner of what it carried
    /// gets the form of someone who may not see it.
    case carriedValueShared
    /// `RoomViews.patches`: a client resuming a view gets the stream's frames, not its reader's own.
    case resumeWithSharedFrames
    /// `RoomViews.reset`: the views keep their values when a batch is taken back, so the next change is projected
    /// against a state the room no longer has.
    case viewsNotReset
    /// `ReleasedPatches.holdsSnapshot`: a snapshot shows a version still being written to a server's own log at
    /// once, so a crash before the write lands leaves its client with a state the log never had.
    case snapshotBeforeStored
    /// `RoomViews.carries`: a view's client resumes through the room's window while a change its stream opened too
    /// late for waits for the log, and never gets that change.
    case resumeAcrossUnreleased
    /// `TimerSchedule.forget`: a failed write's timers stay in the book, so one never stored fires, and one fired or
    /// cancelled in it is lost.
    case failedWriteKeepsTimers
    /// `DurabilityQueue.timersChanged`: a write's timer rows are kept as they came, so a cancel and a new timer of
    /// the same name in one write leave no row (the log stores every row, then removes every gone one).
    case timerRowsNotCoalesced
    /// `SharedRoomQueue.Ending.answers`: a request without a connection (over HTTP) whose write's commit went
    /// unanswered is told `unavailable`, nothing stored, though it may be.
    case uncertainKeyedAnsweredUnavailable

    /// The mutant `LOCKSTEP_MUTANT` names, if any.
    public static var active: Mutant? {
        guard let name = getenv("LOCKSTEP_MUTANT") else { return nil }
        return Mutant(rawValue: String(cString: name))
    }

    /// Whether `mutant` is the one planted in this run.
    public static func isActive(_ mutant: Mutant) -> Bool { active == mutant }
}
#endif
