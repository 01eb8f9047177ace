#if LOCKSTEP_MUTANTS
import LockstepCore
#endif

/// One room's turns in a log several servers share: what waits for its next locked write, the batch that write
/// applies, and who is answered how when the write fails, as ``SharedLogMachine`` decides. No I/O: each call returns
/// what must happen, and ``SharedLogPipeline`` carries it out (the cluster simulation too, with inputs of its own).
struct SharedRoomQueue<Input: BatchInput, Reply> {
    /// Something to apply, or to send, in its turn: after everything the room received before it.
    enum Item {
        case input(Input)
        case reply(Reply)
    }

    /// The pump's next step.
    enum Step {
        /// One locked write of everything that waited (now ``batch``), numbered `attempt`; it reads the marks named
        /// `marks` under the room's lock.
        case write(attempt: Int, marks: [String])
        /// Send `replies`: nothing received before them waits any more.
        case send([Reply])
        /// Read what other servers committed (``SharedLogMachine/catchUpFinished(failed:)`` when done).
        case catchUp
        /// Nothing waits: the pump ends, and the room may go idle.
        case idle
    }

    /// Where a reply goes.
    enum Route {
        /// Out now: nothing of the room waits or is being written.
        case send
        /// With the write whose batch is being applied: it leaves once that write is committed.
        case holdWithWrite
        /// Queued behind what waits; `wake` says whether the pump must start.
        case queued(SharedLogMachine.Wake)
    }

    /// What becomes of one item of a write that failed.
    enum Failure {
        /// Answered: not stored, or (for an input without a connection, after an uncertain commit) perhaps stored.
        case answer(Input)
        /// The connection's input may or may not be stored: it is sent away to resume, and what it is sent after
        /// this (replies of the batch included) is dropped with the connection.
        case sendAway(Input.Connection)
        /// Sent as it is.
        case send(Reply)
    }

    /// How the write in flight ended.
    struct Ending {
        let end: SharedLogMachine.WriteEnd
        /// For a write that failed: what becomes of its batch, in the batch's order. A connection is sent away once,
        /// where its first input was; what it sent after the batch was taken out of the queue too, since a `seq`
        /// applied would move its session's mark past a request that may be lost, and the resumed client would not
        /// send that one again.
        let failures: [Failure]

        /// Whether the write may have been committed.
        var isUncertain: Bool {
            if case .sendAway = end { return true }
            return false
        }
    }

    /// When the room writes, catches up, answers and takes back.
    var machine = SharedLogMachine()
    /// Received, not yet applied: the next write takes all of it.
    private(set) var incoming: [Item] = []
    /// What the write in flight took from `incoming`.
    private(set) var batch: [Item] = []

    /// An input arrives: it waits for the next write.
    mutating func receive(_ input: Input) -> SharedLogMachine.Wake {
        incoming.append(.input(input))
        return machine.received(needsWrite: true)
    }

    /// A reply is ready; `writesIdle` says that the room holds nothing back.
    mutating func route(_ reply: Reply, writesIdle: Bool) -> Route {
        switch machine.replyReady(writesIdle: writesIdle) {
        case .answerNow:
            return .send
        case .holdWithWrite:
            return .holdWithWrite
        case .queue(let wake):
            incoming.append(.reply(reply))
            return .queued(wake)
        }
    }

    /// The pump's next step (see ``SharedLogMachine/next(roomActive:hasWrites:version:)``).
    mutating func next(roomActive: Bool, hasWrites: Bool, version: Int) -> Step {
        switch machine.next(roomActive: roomActive, hasWrites: hasWrites, version: version) {
        case .startWrite(let attempt):
            batch = incoming
            incoming.removeAll()
            var marks: [String] = []
            for case .input(let input) in batch {
                if let name = input.markName, !marks.contains(name) { marks.append(name) }
            }
            return .write(attempt: attempt, marks: marks.sorted())
        case .flushReplies:
            var replies: [Reply] = []
            for case .reply(let reply) in incoming { replies.append(reply) }
            incoming.removeAll()
            return .send(replies)
        case .startCatchUp:
            return .catchUp
        case .idle:
            return .idle
        }
    }

    /// Storage holds the room for write `attempt` and calls its `prepare`: whether it applies anything. What other
    /// servers committed is applied first, then ``applyBatch(from:)``.
    mutating func prepare(attempt: Int) -> Bool {
        machine.prepareCalled(attempt: attempt) == .apply
    }

    /// The room, at `version`, now applies the batch: these items, in order (replies among them go with the write).
    /// ``batchApplied()`` when done.
    mutating func applyBatch(from version: Int) -> [Item] {
        machine.applyingBatch(from: version)
        return batch
    }

    /// The batch is applied; the write goes on to commit it.
    mutating func batchApplied() {
        machine.batchApplied()
    }

    /// The write in flight is committed.
    mutating func writeFinished() -> Ending {
        batch.removeAll()
        return Ending(end: machine.writeFinished(), failures: [])
    }

    /// The write in flight failed; `uncertain` when its commit was sent and not answered.
    mutating func writeFailed(uncertain: Bool) -> Ending {
        let end = machine.writeFailed(uncertain: uncertain)
        defer { batch.removeAll() }
        var failures: [Failure] = []
        var away: [Input.Connection] = []
        for item in batch {
            switch item {
            case .input(let input):
                guard case .sendAway = end, let connection = input.connection else {
                    failures.append(.answer(input))
                    continue
                }
                if !away.contains(connection) {
                    away.append(connection)
                    failures.append(.sendAway(connection))
                }
            case .reply(let reply):
                failures.append(.send(reply))
            }
        }
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.awayAfterReplies) {
            failures = failures.filter { if case .sendAway = $0 { false } else { true } }
                + away.map { .sendAway($0) }
        }
        #endif
        #if LOCKSTEP_MUTANTS
        let dropsQueued = !Mutant.isActive(.queuedAfterUncertainApplied)
        #else
        let dropsQueued = true
        #endif
        if dropsQueued {
            incoming.removeAll { item in
                guard case .input(let input) = item, let connection = input.connection else { return false }
                return away.contains(connection)
            }
        }
        return Ending(end: end, failures: failures)
    }
}

@available(*, unavailable)
extension SharedRoomQueue: Sendable {}
