@testable import LockstepServer

/// One room on a shared log with everything around its ``SharedLogMachine`` simulated, as ``SharedLogPipeline``
/// drives it: the room's queue of requests and replies, a database other servers commit to, locked writes that
/// prepare, commit, fail, end uncertain or are given up on, catch-ups that read or fail, the pump's, following's and a
/// joining client's. Each ``Event`` is one thing that can happen next; after each, the protocol's invariants are
/// checked and what breaks them is collected in ``violations``.
struct SharedLogSimulation {
    /// One thing that can happen next.
    enum Event: Hashable, CustomStringConvertible {
        /// A client's change request arrives.
        case input
        /// A reply made outside any write (a read, an error) is ready.
        case reply
        /// Another server commits one change and announces it.
        case announce
        /// Another server commits one change and its notice is lost.
        case silentCommit
        /// The renewal loop reads the room's stored version (a lost notice, or this server's own late commit).
        case renewal
        /// Notices may have been lost: every room checks.
        case resynchronise
        /// Something outside a batch waits to be stored (a mark, a timer), and the pump is asked to run.
        case leftover
        /// The room leaves memory (evicted, or abandoned elsewhere).
        case dropRoom
        /// The pump's task, started earlier, runs.
        case startPumpTask
        /// The database calls `prepare` of write `attempt` (the one in flight, or one given up on).
        case prepare(attempt: Int)
        /// The database calls `prepare` of the write in flight with changes the room cannot follow.
        case brokenLog
        /// The write in flight commits.
        case commit
        /// The write in flight fails before its commit was sent.
        case failBeforeCommit
        /// The write in flight loses its connection at the commit, which did or did not land.
        case failUncertain(committed: Bool)
        /// The server stops waiting for the write in flight before its `prepare` ran; the transaction goes on.
        case giveUp
        /// The pump's catch-up reads the database, or fails.
        case pumpCatchUp(ok: Bool)
        /// The wait after a failed catch-up is over.
        case retryDue
        /// Following's catch-up reads the database, or fails.
        case followRead(ok: Bool)
        /// A client joins, and the room catches up first.
        case joinStart
        /// The joining client's catch-up reads the database, or fails.
        case joinRead(ok: Bool)

        var description: String {
            switch self {
            case .input: "input"
            case .reply: "reply"
            case .announce: "announce"
            case .silentCommit: "silentCommit"
            case .renewal: "renewal"
            case .resynchronise: "resynchronise"
            case .leftover: "leftover"
            case .dropRoom: "dropRoom"
            case .startPumpTask: "startPumpTask"
            case .prepare(let attempt): "prepare(\(attempt))"
            case .brokenLog: "brokenLog"
            case .commit: "commit"
            case .failBeforeCommit: "failBeforeCommit"
            case .failUncertain(let committed): "failUncertain(\(committed))"
            case .giveUp: "giveUp"
            case .pumpCatchUp(let ok): "pumpCatchUp(\(ok))"
            case .retryDue: "retryDue"
            case .followRead(let ok): "followRead(\(ok))"
            case .joinStart: "joinStart"
            case .joinRead(let ok): "joinRead(\(ok))"
            }
        }
    }

    /// How many of the events that add work may still happen, so that a search stays finite.
    struct Budget {
        var inputs = 2
        var replies = 1
        var otherCommits = 2
        var leftovers = 1
        var drops = 1
        var joins = 1
        var brokenLogs = 1
        /// Notices of lost commits: renewals and resynchronisations.
        var checks = 1
    }

    /// A request or a reply of the room's queue.
    struct Item: BatchInput {
        var markName: String? { nil }
        /// Each input comes from a connection of its own, sent away when whether it was stored is unknown.
        var connection: Int? { isInput ? id : nil }
        /// No session marks: a request's duplicate is not what this simulation looks at.
        var sessionSeq: (session: String, seq: Int)? { nil }

        let id: Int
        let isInput: Bool
        /// The inputs received before it and not settled then: a reply may leave only once they are.
        let after: Set<Int>
    }

    /// The room's write in flight, as the database sees it.
    struct DatabaseWrite {
        let attempt: Int
        var prepared = false
        /// The version its batch was applied on top of, and the version after it.
        var base: Int?
        var top: Int?
    }

    /// What the pump's task is doing.
    enum PumpTask: Equatable {
        case none
        case scheduled
        case running
        case writing
        case catchingUp(after: Int)
        case sleeping
    }

    enum CatchUp: Equatable {
        case caughtUp, deferred, failed
    }

    /// The real queue of the room's turns, with its machine; inputs and replies are both `Item`s.
    var queue = SharedRoomQueue<Item, Item>()
    var budget: Budget
    /// The room's version, and the database's.
    var version = 0
    var stored = 0
    var dropped = false
    var leftover = false
    /// Replies held with the write in flight.
    var held: [Item] = []
    var nextID = 0
    /// Inputs received and neither committed nor answered.
    var unsettled: Set<Int> = []
    var released: Set<Int> = []
    var pumpTask = PumpTask.none
    var current: DatabaseWrite?
    /// Attempts given up on whose transactions may still call `prepare`.
    var stale: [Int] = []
    /// How often each attempt's batch was applied.
    var applications: [Int: Int] = [:]
    var followRead: Int?
    var joinRead: Int?
    var violations: [String] = []
    /// Events so far, for the report of a violation.
    var trace: [Event] = []

    init(budget: Budget = Budget()) {
        self.budget = budget
    }

    // MARK: - What can happen

    /// Every event that can happen next.
    var enabled: [Event] {
        var events: [Event] = []
        if !dropped {
            if budget.inputs > 0 { events.append(.input) }
            if budget.replies > 0 { events.append(.reply) }
            if budget.leftovers > 0, !leftover { events.append(.leftover) }
            if budget.joins > 0, joinRead == nil { events.append(.joinStart) }
            if budget.drops > 0 { events.append(.dropRoom) }
            if budget.checks > 0, stored > version {
                events.append(.renewal)
                events.append(.resynchronise)
            }
        }
        // Another server commits only while this one does not hold the room's lock.
        if budget.otherCommits > 0, current?.prepared != true {
            events.append(.announce)
            events.append(.silentCommit)
        }
        if pumpTask == .scheduled { events.append(.startPumpTask) }
        if let current {
            if current.prepared {
                events += [
                    .commit, .failBeforeCommit, .failUncertain(committed: true), .failUncertain(committed: false),
                ]
            } else {
                events += [.prepare(attempt: current.attempt), .failBeforeCommit, .giveUp]
                if budget.brokenLogs > 0 { events.append(.brokenLog) }
            }
        }
        events += stale.map { .prepare(attempt: $0) }
        if case .catchingUp = pumpTask { events += [.pumpCatchUp(ok: true), .pumpCatchUp(ok: false)] }
        if pumpTask == .sleeping { events.append(.retryDue) }
        if followRead != nil { events += [.followRead(ok: true), .followRead(ok: false)] }
        if joinRead != nil { events += [.joinRead(ok: true), .joinRead(ok: false)] }
        return events
    }

    /// Whatever is in flight completes without faults, and nothing new arrives, until nothing runs; `limit` bounds the
    /// steps, past which the room is taken to be going round in circles.
    mutating func settle(limit: Int = 500) {
        for _ in 0..<limit {
            let events = enabled
            let progress: [Event] = [
                .startPumpTask, .commit, .pumpCatchUp(ok: true), .retryDue, .followRead(ok: true), .joinRead(ok: true),
            ]
            if let event = progress.first(where: events.contains) {
                happen(event)
            } else if let current, !current.prepared {
                happen(.prepare(attempt: current.attempt))
            } else if let attempt = stale.first {
                happen(.prepare(attempt: attempt))
            } else {
                return checkSettled()
            }
        }
        fail("still busy after \(limit) steps of settling")
    }

    /// Once nothing runs: the room is idle, every input was answered, and it holds what was announced (a room
    /// dropped meanwhile only stops: its clients were sent away).
    private mutating func checkSettled() {
        let machine = queue.machine
        check(machine.pump == .stopped && !machine.following, "nothing runs, yet the machine says \(machine)")
        check(machine.write == nil, "a write is left in flight")
        guard !dropped else { return }
        check(machine.isIdle, "nothing runs, yet the machine is not idle: \(machine)")
        check(queue.incoming.isEmpty, "requests are left waiting")
        check(unsettled.isEmpty, "inputs \(unsettled.sorted()) were never answered")
        check(!machine.isBehind(version: version), "the room is behind: at \(version), announced \(machine.announced)")
        check(!leftover, "what waited to be stored was not")
    }

    // MARK: - Events

    mutating func happen(_ event: Event) {
        trace.append(event)
        switch event {
        case .input:
            budget.inputs -= 1
            let item = Item(id: makeID(), isInput: true, after: unsettled)
            unsettled.insert(item.id)
            if queue.receive(item) == .startPump { schedulePump() }
        case .reply:
            budget.replies -= 1
            let item = Item(id: makeID(), isInput: false, after: unsettled)
            switch queue.route(item, writesIdle: current?.top == nil && !leftover) {
            case .send: release(item)
            case .holdWithWrite: fail("a reply outside any batch was held with the write")
            case .queued(let wake): if wake == .startPump { schedulePump() }
            }
        case .announce:
            budget.otherCommits -= 1
            stored += 1
            committed(stored)
        case .silentCommit:
            budget.otherCommits -= 1
            stored += 1
        case .renewal:
            budget.checks -= 1
            committed(stored)
        case .resynchronise:
            budget.checks -= 1
            queue.machine.mayHaveMissed()
            wake()
        case .leftover:
            budget.leftovers -= 1
            leftover = true
            wake()
        case .dropRoom:
            budget.drops -= 1
            dropped = true
        case .startPumpTask:
            pumpTask = .running
            runPump()
        case .prepare(let attempt):
            prepare(attempt, followable: true)
        case .brokenLog:
            budget.brokenLogs -= 1
            prepare(current!.attempt, followable: false)
        case .commit:
            let write = current!
            current = nil
            if let top = write.top { stored = top }
            for case .input(let item) in queue.batch { unsettled.remove(item.id) }
            let ending = queue.writeFinished()
            check(ending.end == .release, "a committed write ended with \(ending.end)")
            for item in held { release(item) }
            held = []
            pumpTask = .running
            runPump()
        case .failBeforeCommit:
            writeFailed(current!, uncertain: false)
        case .failUncertain(let committed):
            if committed, let top = current!.top { stored = top }
            writeFailed(current!, uncertain: true)
        case .giveUp:
            stale.append(current!.attempt)
            writeFailed(current!, uncertain: false)
        case .pumpCatchUp(let ok):
            guard case .catchingUp(let after) = pumpTask else { return fail("no catch-up of the pump's runs") }
            let outcome = finishCatchUp(after: after, ok: ok)
            if case .retryCatchUp = queue.machine.catchUpFinished(failed: outcome == .failed) {
                check(outcome == .failed, "a catch-up that did not fail is retried")
                pumpTask = .sleeping
            } else {
                check(outcome != .failed, "a failed catch-up is not retried")
                pumpTask = .running
                runPump()
            }
        case .retryDue:
            queue.machine.retryDue()
            pumpTask = .running
            runPump()
        case .followRead(let ok):
            let after = followRead!
            followRead = nil
            if finishCatchUp(after: after, ok: ok) == .caughtUp {
                continueFollowing()
            } else {
                queue.machine.followingFinished()
            }
        case .joinStart:
            budget.joins -= 1
            joinRead = startCatchUp()
        case .joinRead(let ok):
            let after = joinRead!
            joinRead = nil
            _ = finishCatchUp(after: after, ok: ok)
        }
        checkInvariants()
    }

    private mutating func makeID() -> Int {
        nextID += 1
        return nextID
    }

    /// `SharedLogPipeline.pump`: the task starts later.
    private mutating func wake() {
        if queue.machine.wake() == .startPump { schedulePump() }
    }

    private mutating func schedulePump() {
        check(pumpTask == .none, "a second pump started beside \(pumpTask)")
        pumpTask = .scheduled
    }

    /// The pump's loop, from where it resumed to its next wait.
    private mutating func runPump() {
        while true {
            let step = queue.next(roomActive: !dropped, hasWrites: leftover, version: version)
            switch step {
            case .write(let attempt, _):
                check(current == nil, "a second write started while one is in flight")
                current = DatabaseWrite(attempt: attempt)
                pumpTask = .writing
                return
            case .send(let replies):
                for item in replies {
                    check(!item.isInput, "an input was flushed as a reply")
                    release(item)
                }
            case .catchUp:
                if let after = startCatchUp() {
                    pumpTask = .catchingUp(after: after)
                    return
                }
                check(queue.machine.catchUpFinished(failed: false) == .next, "a deferred catch-up is retried")
            case .idle:
                pumpTask = .none
                guard !dropped else { return }
                check(queue.incoming.isEmpty, "the pump stopped with requests waiting")
                check(!leftover, "the pump stopped with something to store")
                check(!queue.machine.isBehind(version: version), "the pump stopped behind what was announced")
                check(queue.machine.write == nil, "the pump stopped with a write in flight")
                return
            }
        }
    }

    /// `SharedLogPipeline.committed`: another server announced `version`.
    private mutating func committed(_ announced: Int) {
        guard !dropped, announced > version else { return }
        queue.machine.announced(version: announced)
        wake()
        guard queue.machine.startFollowing() else { return }
        continueFollowing()
    }

    private mutating func continueFollowing() {
        guard queue.machine.followsOn(version: version, roomActive: !dropped) else { return }
        if let after = startCatchUp() {
            followRead = after
        } else {
            queue.machine.followingFinished()
        }
    }

    /// `SharedLogPipeline.catchUp` up to its read: the version read after, or nil when it was deferred at once.
    private mutating func startCatchUp() -> Int? {
        let decision = queue.machine.catchUp(after: version, version: version)
        if decision == .checkLater(.startPump) { schedulePump() }
        return decision == .apply ? version : nil
    }

    /// `SharedLogPipeline.catchUp` after its read.
    private mutating func finishCatchUp(after: Int, ok: Bool) -> CatchUp {
        guard !dropped, ok else { return .failed }
        let decision = queue.machine.catchUp(after: after, version: version)
        guard decision == .apply else {
            if decision == .checkLater(.startPump) { schedulePump() }
            return .deferred
        }
        check(current?.top == nil, "other servers' commits were applied over a batch not yet committed")
        version = max(version, stored)
        return .caughtUp
    }

    /// `SharedLogPipeline.prepare`; `followable` false when the log read does not follow the room's copy.
    private mutating func prepare(_ attempt: Int, followable: Bool) {
        let isCurrent = current?.attempt == attempt
        if isCurrent { current?.prepared = true } else { stale.removeAll { $0 == attempt } }
        guard !dropped, queue.prepare(attempt: attempt) else { return }
        check(isCurrent, "attempt \(attempt), given up on, was prepared")
        guard followable else {
            dropped = true
            return
        }
        version = max(version, stored)
        let base = version
        for item in queue.applyBatch(from: base) {
            switch item {
            case .input(let item):
                version += 1
                let ack = Item(id: makeID(), isInput: false, after: item.after.union([item.id]))
                switch queue.route(ack, writesIdle: false) {
                case .holdWithWrite: held.append(ack)
                default: fail("an ack made while the batch is applied was not held with the write")
                }
            case .reply(let item):
                held.append(item)
            }
        }
        queue.batchApplied()
        applications[attempt, default: 0] += 1
        check(applications[attempt] == 1, "attempt \(attempt) was applied \(applications[attempt]!) times")
        current?.base = base
        current?.top = version
        leftover = false
    }

    /// `SharedLogPipeline.end` after a failure.
    private mutating func writeFailed(_ write: DatabaseWrite, uncertain: Bool) {
        current = nil
        let ending = queue.writeFailed(uncertain: uncertain)
        let expected: SharedLogMachine.WriteEnd =
            uncertain ? .sendAway(rollBackTo: write.base) : .answerUnavailable(rollBackTo: write.base)
        check(ending.end == expected, "a failed write ended with \(ending.end), not \(expected)")
        if let base = write.base { version = base }
        held = []
        for failure in ending.failures {
            switch failure {
            case .answer(let item): unsettled.remove(item.id)
            case .send(let item): release(item)
            case .sendAway(let id):
                check(uncertain, "input \(id) was sent away after a write that surely failed")
                unsettled.remove(id)
            }
        }
        pumpTask = .running
        runPump()
    }

    private mutating func release(_ item: Item) {
        check(!released.contains(item.id), "reply \(item.id) was released twice")
        released.insert(item.id)
        let early = item.after.intersection(unsettled)
        check(early.isEmpty, "reply \(item.id) left before inputs \(early.sorted()) were settled")
    }

    // MARK: - Invariants

    private mutating func checkInvariants() {
        check((queue.machine.write == nil) == (current == nil), "the machine's write and the database's disagree")
        if let write = queue.machine.write, let current {
            check(write.attempt == current.attempt, "the machine writes \(write.attempt), storage \(current.attempt)")
            check(write.batchBase == current.base, "the machine's batch base differs from the database's")
        }
        check(
            (queue.machine.pump == .stopped) == (pumpTask == .none),
            "the pump is \(queue.machine.pump), its task \(pumpTask)")
        check(!queue.machine.isIdle || (pumpTask == .none && followRead == nil), "idle while something runs")
        check(!queue.machine.isIdle || queue.incoming.isEmpty, "idle while requests wait")
        check(
            queue.incoming.isEmpty == (queue.machine.waiting == .nothing),
            "the queue and the machine disagree on what waits")
        let inputWaits = queue.incoming.contains { if case .input = $0 { true } else { false } }
        check(!inputWaits || queue.machine.waiting == .inputs, "inputs wait, the machine says replies")
        check(queue.machine.following == (followRead != nil), "following runs without a read, or reads without running")
        if let current, let base = current.base, let top = current.top {
            check(base <= stored && version == top, "the room is not its batch on top of the database")
        } else if !dropped {
            check(version <= stored, "the room holds versions the database does not")
        }
    }

    private mutating func check(_ condition: Bool, _ message: String) {
        if !condition { fail(message) }
    }

    private mutating func fail(_ message: String) {
        violations.append("\(message), after \(trace.map(\.description).joined(separator: ", "))")
    }
}
