import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepStorage
import LockstepTransport

/// The servers: what ``SharedLogPipeline`` does around each room's ``SharedLogMachine``, step for step, with the
/// database calls as tasks of the scheduler.
extension ClusterSimulation {
    // MARK: - Connections

    func deliverToServer(_ id: Int) {
        guard let connection = connections[id], connection.open, !connection.toServer.isEmpty else { return }
        let frame = connection.toServer.removeFirst()
        let server = servers[connection.server]
        guard server.alive, server.incarnation == connection.incarnation, let room = server.rooms[connection.room],
            room.connections.contains(id)
        else { return }
        switch frame {
        case .request(let request):
            let session = clients[connection.client].session
            submit(.request(request, connection: id, session: session), to: room, on: server)
        case .read(let readID):
            reply(.readReply(id: readID, version: room.engine.store.version), to: id, in: room, on: server)
        case .presence(let state):
            room.presenceStates[id] = state
            peersChanged(in: room, on: server)
        }
    }

    /// `CommitPipeline.submit`: into the room's next locked write on a shared log, at once on a log of the server's
    /// own.
    func submit(_ input: SimulatedRoom.Input, to room: SimulatedRoom, on server: SimulatedServer) {
        guard localLog else {
            if room.queue.receive(input) == .startPump { schedulePump(room, on: server) }
            return
        }
        applyInput(input, in: room, on: server)
        enqueue(room, on: server)
    }

    /// `SharedLogPipeline.reply`, or `LocalLogPipeline.reply`: at once unless something waits for the log.
    func reply(_ frame: ServerFrame, to connection: Int, in room: SimulatedRoom, on server: SimulatedServer) {
        if localLog { return replyLocally(frame, to: connection, in: room, on: server) }
        switch room.queue.route((connection, frame), writesIdle: room.writes.isIdle) {
        case .holdWithWrite: room.hold(.answer(connection: connection, frame))
        case .send: send(frame, to: connection)
        case .queued(let wake): if wake == .startPump { schedulePump(room, on: server) }
        }
    }

    func send(_ frame: ServerFrame, to id: Int) {
        guard let connection = connections[id], connection.open, !connection.closing else { return }
        connection.toClient.append(frame)
        tasks.append(.toClient(connection: id))
    }

    /// `Room.release`: a released change to every client of the room, its message to those who see the whole room
    /// and to a view's clients what the change is to their view (if anything); it is kept for clients resuming.
    func broadcast(_ patch: Room.LoggedPatch, in room: SimulatedRoom) {
        room.engine.release(patch)
        for id in room.connections {
            // A client whose snapshot is of a later version gets none of the patches up to it, then that snapshot.
            if let held = room.heldSnapshots[id], patch.version <= held.version {
                if patch.version == held.version {
                    room.heldSnapshots[id] = nil
                    if let frame = held.frame { send(frame, to: id) }
                }
                continue
            }
            var bytes = patch.frame.payload
            if let connection = connections[id], let view = clients[connection.client].view {
                guard let frame = patch.views[room.engine.views.key(of: view)]?.frame(for: view.reader) else {
                    continue
                }
                bytes = frame.payload
            }
            patchesSent += 1
            #if LOCKSTEP_MUTANTS
            if Mutant.isActive(.lostPatch), patchesSent % 50 == 0 { continue }
            #endif
            send(.patch(bytes), to: id)
        }
    }

    /// A connection leaves the room, and its view's stream: `Room.leave`.
    func leave(_ id: Int, from room: SimulatedRoom) {
        guard room.connections.contains(id) else { return }
        room.connections.removeAll { $0 == id }
        room.heldSnapshots[id] = nil
        room.presenceStates[id] = nil
        if let connection = connections[id], let view = clients[connection.client].view {
            _ = room.engine.views.dismiss(view)
        }
    }

    /// The server tells the connection to resume elsewhere and closes it.
    func sendAway(_ id: Int, from room: SimulatedRoom) {
        send(.error(id: nil, code: "unavailable"), to: id)
        send(.close, to: id)
        connections[id]?.closing = true
        leave(id, from: room)
        if let connection = connections[id] { peersChanged(in: room, on: servers[connection.server]) }
    }

    /// A room whose copy cannot be trusted is dropped. Never needed in a correct cluster: a violation.
    func abandon(_ room: SimulatedRoom, on server: SimulatedServer, because reason: String) {
        violate("server \(server.index) abandons \(room.name): \(reason)")
        guard server.rooms[room.name] === room else { return }
        server.rooms[room.name] = nil
        for id in room.connections { sendAway(id, from: room) }
    }

    // MARK: - Joining

    /// A handshake: the room is read if the server does not hold it, caught up with the log, and the client answered
    /// with a resume or a snapshot carrying its session's stored mark.
    func join(_ id: Int) {
        guard let connection = connections[id], connection.open else { return }
        let server = servers[connection.server]
        guard server.alive, server.incarnation == connection.incarnation else { return }
        let name = connection.room
        guard !log.isDown(at: step) else { return closeAtJoin(connection) }
        guard let room = server.rooms[name] ?? loadRoom(name, on: server) else { return }
        let session = clients[connection.client].session
        if let mark = log.mark(of: session, in: name, at: step) { room.engine.marks.adopt(mark) }
        guard room.machine.mayApplyCommitted else {
            // `prepareJoin`: a write of the room's own settles first.
            room.machine.mayHaveMissed()
            wake(room, on: server)
            tasks.append(.join(connection: id))
            return
        }
        #if LOCKSTEP_MUTANTS
        let catchesUp = !Mutant.isActive(.joinWithoutCatchUp)
        #else
        let catchesUp = true
        #endif
        if catchesUp {
            guard applyCommitted(log.rows(of: name, after: room.engine.store.version), to: room, on: server) else {
                return
            }
        }
        answerJoin(id, of: clients[connection.client], since: connection.since, in: room)
        room.connections.append(id)
        peersChanged(in: room, on: server)
    }

    /// `SyncServer.join`'s answer: the client's view opened (if it follows one), then a resume with what it missed
    /// as it sees the room (`RoomSight.missedPatches`: the view's own patches, or the room's resume window), else a
    /// snapshot of what it sees, each with its session's stored mark; then the client is on its view's stream.
    private func answerJoin(_ id: Int, of client: SimulatedClient, since: Int?, in room: SimulatedRoom) {
        let seq = room.engine.marks.storedSeq(for: client.session)
        let version = room.engine.store.version
        let state = (try? room.engine.store.stateJSON()) ?? .null
        if let view = client.view { room.engine.views.open(view, version: version) { state } }
        if let since, let missed = room.engine.missedPatches(after: since, seenBy: client.sight) {
            send(.resume(version: since, seq: seq), to: id)
            for frame in missed { send(.patch(frame.payload), to: id) }
        } else {
            let history = room.engine.store.history
            let seen = client.sight.value(in: state, parts: room.engine.views.parts)
            let snapshot = ServerFrame.snapshot(
                version: version, state: seen, undo: history.undoCount, redo: history.redoCount, seq: seq)
            // `Session.synchronise`: a snapshot of changes still being stored goes out once they are, and the
            // client follows the room from then on (`Room.follow`).
            let holds = room.engine.released.holdsSnapshot(of: version)
            if version > room.engine.released.version { room.heldSnapshots[id] = (version, holds ? snapshot : nil) }
            if !holds { send(snapshot, to: id) }
        }
        if let view = client.view { room.engine.views.admit(view, version: version) }
    }

    /// The server reads a room it does not hold (for a handshake or a timer); nil when the database is away.
    func loadRoom(_ name: String, on server: SimulatedServer) -> SimulatedRoom? {
        guard !log.isDown(at: step) else { return nil }
        let rows = log.rows(of: name, after: 0)
        let room: SimulatedRoom
        do {
            let replay = try RoomReplay(continuing: app.makeStore(undoDepth: 50), with: rows, app: app)
            if let damaged = replay.damagedFrom { violate("the log of \(name) breaks at version \(damaged)") }
            // As `SyncServer.install`: the last changes as released patches, for resuming clients.
            let recent = rows.suffix(SimulatedRoom.resumeWindow).compactMap {
                Room.loggedPatch($0, parts: app.privateParts)?.patch
            }
            room = SimulatedRoom(
                id: makeID(), name: name, store: replay.store, recent: recent, parts: app.privateParts)
            room.engine.timeline.restore(
                rows.map { ($0.version, try? $0.parsedRecord().inverse) }, through: replay.store.version)
        } catch {
            violate("server \(server.index) cannot read \(name): \(error)")
            return nil
        }
        server.rooms[name] = room
        guard !localLog else {
            // `SyncServer.install`: every mark the log holds comes with the room (no write's lock reads them later).
            for session in log.rooms[name]!.marks.keys.sorted() {
                if let mark = log.mark(of: session, in: name, at: step) { room.engine.marks.adopt(mark) }
            }
            return room
        }
        // `installed`: what was committed while it was read is fetched next, and the clients on other servers read.
        room.machine.mayHaveMissed()
        wake(room, on: server)
        readPeers(of: room, on: server)
        return room
    }

    /// The database could not be read: the handshake succeeded, and the connection is closed (1011).
    private func closeAtJoin(_ connection: SimulatedConnection) {
        send(.error(id: nil, code: "unavailable"), to: connection.id)
        send(.close, to: connection.id)
        connection.closing = true
    }

    // MARK: - The pump

    func wake(_ room: SimulatedRoom, on server: SimulatedServer) {
        if room.machine.wake() == .startPump { schedulePump(room, on: server) }
    }

    func schedulePump(_ room: SimulatedRoom, on server: SimulatedServer) {
        tasks.append(.pump(server: server.index, incarnation: server.incarnation, room: room.id, name: room.name))
    }

    /// `SharedLogPipeline.startPump`'s loop, from where it resumed to its next wait.
    func runPump(_ room: SimulatedRoom, on server: SimulatedServer) {
        while true {
            let active = server.alive && server.rooms[room.name] === room
            switch room.queue.next(
                roomActive: active, hasWrites: room.writes.hasWrites, version: room.engine.store.version)
            {
            case .write(let attempt, let marks):
                return startWrite(room, attempt: attempt, marks: marks, on: server)
            case .send(let replies):
                for (connection, frame) in replies { send(frame, to: connection) }
            case .catchUp:
                if startCatchUp(room, .pump, on: server) { return }
                _ = room.machine.catchUpFinished(failed: false)
            case .idle:
                return
            }
        }
    }

    // MARK: - Writes

    private func startWrite(_ room: SimulatedRoom, attempt: Int, marks: [String], on server: SimulatedServer) {
        room.clearBatch()
        let id = makeID()
        transactions[id] = Transaction(
            id: id, server: server.index, incarnation: server.incarnation, name: room.name, room: room.id,
            attempt: attempt, after: room.engine.store.version, sessions: marks)
        room.transaction = id
        tasks.append(.lock(transaction: id))
    }

    /// The transaction takes the room's lock, reads what it missed and the marks of its sessions, and calls the
    /// server's `prepare`.
    func lock(_ id: Int) {
        guard var transaction = transactions[id] else { return }
        let server = servers[transaction.server]
        guard server.alive, server.incarnation == transaction.incarnation else {
            transactions[id] = nil
            return
        }
        guard !log.isDown(at: step) else { return ended(transaction, committed: false, uncertain: false) }
        log.rooms[transaction.name]!.lockedBy = id
        let missed = log.rows(of: transaction.name, after: transaction.after)
        let marks = transaction.sessions.compactMap { log.mark(of: $0, in: transaction.name, at: step) }
        if let room = server.rooms[transaction.name], room.id == transaction.room {
            room.engine.loggedTimers = log.rooms[transaction.name]!.timers.mapValues(\.order)
            prepare(room, attempt: transaction.attempt, missed: missed, marks: marks, on: server, into: &transaction)
        }
        transaction.phase = .prepared
        transactions[id] = transaction
        tasks.append(.commit(transaction: id))
    }

    /// `SharedLogPipeline.prepare`.
    private func prepare(
        _ room: SimulatedRoom, attempt: Int, missed: [StoredChange], marks: [StoredMark], on server: SimulatedServer,
        into transaction: inout Transaction
    ) {
        guard room.queue.prepare(attempt: attempt) else { return }
        guard applyCommitted(missed, to: room, on: server) else { return }
        for mark in marks { room.engine.marks.adopt(mark) }
        room.engine.store.setHistoryCheckpoint()
        for item in room.queue.applyBatch(from: room.engine.store.version) {
            switch item {
            case .input(let input): applyInput(input, in: room, on: server)
            case .reply(let reply): room.hold(.answer(connection: reply.connection, reply.frame))
            }
        }
        room.queue.batchApplied()
        // What the real queue hands the write: its rows, and its timer rows as the log stores them.
        let (rows, _, sessions) = room.writes.takeWrite(sessions: SimulatedRoom.sessionWrites)
        room.batchRows = rows
        transaction.rows = rows
        transaction.states = room.batchStates
        transaction.marks = room.batchMarks
        transaction.requests = room.batchRequests
        (transaction.timerOps, transaction.cancels) = SimulatedLog.storedTimerOps(
            scheduled: sessions.timers, gone: sessions.timersGone, batch: room.batchTimerOps,
            cancels: room.batchCancels)
        transaction.scheduledHere = SimulatedLog.scheduledHere(room.batchTimerOps)
    }

    /// `SyncServer.apply`: the room's engine takes the input in its turn (the real ``RoomEngine``), and what it decides
    /// is carried out as the server does: changes and answers held until the commit, marks and timers into the batch.
    /// A fired timer's row removed on its own (only under a mutant) goes straight into the batch.
    func applyInput(_ input: SimulatedRoom.Input, in room: SimulatedRoom, on server: SimulatedServer) {
        let taken: RoomEngine.Input
        var asked: (request: SimulatedRequest, connection: Int)?
        switch input {
        case .request(let request, let id, _):
            guard let connection = connections[id] else { return }
            asked = (request, id)
            taken = .request(
                clientRequest(request), from: source(of: request, on: id, client: clients[connection.client]),
                older: olderRows(for: request, in: room))
        case .timer(let timer):
            taken = .timer(timer)
        case .timerGone(let name):
            room.engine.loggedTimers?[name] = nil
            return storeInBatch((name, nil), in: room)
        }
        let timerOpsBefore = room.batchTimerOps.count
        let turn = room.engine.take(
            taken, at: RoomEngine.Time(milliseconds: step, markSeconds: Double(step)), epoch: "simulation",
            rules: SimulatedRoom.rules, timers: &server.timers)
        if turn.applied, let asked { room.batchRequests.append(asked.request.id) }
        let commits = turn.outputs.filter { if case .commit = $0 { true } else { false } }.count
        if commits > 1 {
            violate("one turn of \(room.name) made \(commits) changes; the simulation's apps make one at most")
        }
        for output in turn.outputs {
            switch output {
            case .commit(let commit):
                held(commit, in: room)
            case .mark(let mark):
                storeInBatch(mark, in: room)
            case .timers(let scheduled, let gone):
                for timer in scheduled { storeInBatch((timer.name, timer), in: room) }
                for key in gone { storeInBatch((key.name, nil), in: room) }
            case .answer(let answer):
                guard let asked else { break }
                let frame = ServerFrame(
                    answer, to: asked.request, version: room.engine.store.version, changed: commits > 0 && turn.applied)
                room.hold(.answer(connection: asked.connection, frame))
            case .wait, .notice:
                // The simulated servers' timers fire on the steps' clock; notices are the operator's.
                break
            case .run:
                violate("a turn of \(room.name) started an effect's work; the simulation's apps start none")
            }
        }
        guard let asked, turn.applied else {
            #if LOCKSTEP_MUTANTS
            if case .timer(let timer) = input, commits > 0, Mutant.isActive(.firedTimerRowRemovedSeparately) {
                room.firedAwaitingRemoval.append(timer.name)
            }
            #endif
            return
        }
        switch asked.request.kind {
        case .cancel(let name):
            room.batchCancels.append((name, timerOpsBefore))
        case .revert(let version):
            checkRevert(of: room, to: version, by: asked.request)
        default:
            break
        }
    }

    /// The request as the server reads it from the client's frame.
    private func clientRequest(_ request: SimulatedRequest) -> ClientRequest {
        var timer: TimerRequest?
        if case .schedule(_, let after, let name) = request.kind { timer = TimerRequest(after: after, name: name) }
        return ClientRequest(
            message: request.message, seq: request.idempotency == nil ? request.seq : nil, timer: timer)
    }

    /// Who a request on connection `id` is to the room's engine: the connection's client, of the client's session (a
    /// request with an idempotency key comes as over HTTP, with the key).
    private func source(of request: SimulatedRequest, on id: Int, client: SimulatedClient) -> RoomEngine.Source {
        let sender = Sender(client: "c\(id)", session: client.session)
        return RoomEngine.Source(
            client: sender.client, sender: sender, subject: nil, session: client.session,
            idempotency: request.idempotency)
    }

    /// `SyncServer.revertFromStorage`: the log's changes a revert needs beyond what the room's timeline holds, read
    /// before its turn.
    private func olderRows(for request: SimulatedRequest, in room: SimulatedRoom) -> [StoredChange] {
        guard case .revert(let version) = request.kind, room.engine.needsStoredHistory(toReach: version) else {
            return []
        }
        let held = room.engine.timeline.oldestVersion ?? room.engine.store.version + 1
        return log.rows(of: room.name, after: version).filter { $0.version < held }
    }

    /// A revert's state must be the log's at its version.
    private func checkRevert(of room: SimulatedRoom, to version: Int, by request: SimulatedRequest) {
        let logged = log.rooms[room.name]!.states
        if version < logged.count, (try? room.engine.store.stateJSON()) != logged[version] {
            violate(
                "\(request.id) reverted \(room.name) to version \(version), and the state differs from the log's there")
        }
    }

    /// `SyncServer`'s pipeline takes a mark: one per name goes with the write, as the real write sends it.
    private func storeInBatch(_ mark: StoredMark, in room: SimulatedRoom) {
        room.writes.marks.append(mark)
        let earlier = room.batchMarks.first { $0.session == mark.session }?.seq ?? 0
        room.batchMarks.removeAll { $0.session == mark.session }
        room.batchMarks.append(
            StoredMark(
                room: mark.room, session: mark.session, seq: max(earlier, mark.seq), time: mark.time,
                answer: mark.answer, holes: mark.holes))
    }

    /// A change the turn made: its row in the queue with its patch, held until the commit.
    private func held(_ commit: RoomEngine.Commit, in room: SimulatedRoom) {
        let row = StoredChange(
            room: room.name, version: commit.change.version, message: commit.encoded.bytes,
            record: commit.encoded.record.serialized())
        room.batchStates.append((try? room.engine.store.stateJSON()) ?? .null)
        room.writes.append(row, holding: SimulatedRelease(room: room, held: .patch(commit.patch)), snapshots: [])
    }

    /// The transaction's COMMIT, and what the server hears of it.
    func commit(_ id: Int) {
        guard let transaction = transactions[id] else { return }
        let server = servers[transaction.server]
        guard server.alive, server.incarnation == transaction.incarnation else {
            return ended(transaction, committed: false, uncertain: false)
        }
        if log.isDown(at: step) {
            return ended(transaction, committed: false, uncertain: chance(500))
        }
        if faultsOn, chance(faults.failedCommit) { return ended(transaction, committed: false, uncertain: false) }
        if faultsOn, chance(faults.uncertainCommit) {
            return ended(transaction, committed: chance(500), uncertain: true)
        }
        ended(transaction, committed: true, uncertain: false)
    }

    /// The transaction is over: committed or not, the lock released, and the server that waits for it told.
    func ended(_ transaction: Transaction, committed: Bool, uncertain: Bool) {
        transactions[transaction.id] = nil
        if log.rooms[transaction.name]!.lockedBy == transaction.id { log.rooms[transaction.name]!.lockedBy = nil }
        note("transaction \(transaction.id) ends: committed \(committed), uncertain \(uncertain)")
        if committed, transaction.phase == .prepared {
            let problems = log.append(
                transaction.rows, states: transaction.states, marks: transaction.marks, requests: transaction.requests,
                timerOps: transaction.timerOps, cancels: transaction.cancels, to: transaction.name,
                scheduledHere: transaction.scheduledHere)
            for problem in problems { violate(problem) }
            if let last = transaction.rows.last {
                tasks.append(
                    .notify(
                        server: transaction.server, incarnation: transaction.incarnation, room: transaction.name,
                        version: last.version))
            }
        }
        let server = servers[transaction.server]
        guard server.alive, server.incarnation == transaction.incarnation,
            let room = server.rooms[transaction.name], room.id == transaction.room, room.transaction == transaction.id
        else { return }
        let ending =
            committed && !uncertain ? room.queue.writeFinished() : room.queue.writeFailed(uncertain: uncertain)
        endWrite(ending, of: room, on: server)
    }

    /// The server stops waiting for a write whose lock it has not got (its timeout); the transaction goes on.
    func giveUpSomething() {
        let waiting = transactions.keys.sorted().compactMap { transactions[$0] }.filter { $0.phase == .waiting }
        guard let transaction = waiting.randomElement(using: &random) else { return }
        let server = servers[transaction.server]
        guard server.alive, server.incarnation == transaction.incarnation,
            let room = server.rooms[transaction.name], room.id == transaction.room, room.transaction == transaction.id
        else { return }
        note("server \(server.index) gives up on transaction \(transaction.id)")
        endWrite(room.queue.writeFailed(uncertain: false), of: room, on: server)
    }

    /// `SharedLogPipeline.end`, then the pump goes on.
    private func endWrite(
        _ ending: SharedRoomQueue<SimulatedRoom.Input, SimulatedRoom.Reply>.Ending, of room: SimulatedRoom,
        on server: SimulatedServer
    ) {
        let held = room.writes.finished()
        room.transaction = nil
        switch ending.end {
        case .release:
            room.engine.store.releaseHistoryCheckpoint()
            for mark in room.batchMarks { room.engine.marks.stored(mark) }
            for item in held {
                switch item.held {
                case .patch(let patch): broadcast(patch, in: room)
                case .answer(let connection, let frame): send(frame, to: connection)
                }
            }
            removeFiredSeparately(room, on: server)
        case .answerUnavailable(let base), .sendAway(let base):
            if let base { rollBack(room, to: base, on: server) }
            for answer in ending.answers(marks: &room.engine.marks, now: Double(step)) {
                switch answer {
                case .sendAway(let connection):
                    if room.connections.contains(connection) { sendAway(connection, from: room) }
                case .duplicate(.request(let request, let connection, _)):
                    let ack = ServerFrame.ack(
                        id: request.id, version: room.engine.store.version, duplicate: true, changed: false)
                    send(ack, to: connection)
                case .unknown(.request(let request, let connection, _)):
                    send(.maybeStored(id: request.id), to: connection)
                case .unavailable(.request(let request, let connection, _)):
                    send(.error(id: request.id, code: "unavailable"), to: connection)
                case .duplicate, .unknown, .unavailable:
                    break
                case .send(let reply):
                    send(reply.frame, to: reply.connection)
                }
            }
        }
        room.firedAwaitingRemoval = []
        room.clearBatch()
        if server.rooms[room.name] === room { runPump(room, on: server) }
    }

    /// `SharedLogPipeline.rollBack`.
    private func rollBack(_ room: SimulatedRoom, to version: Int, on server: SimulatedServer) {
        do throws(StoreRollback.Failure) {
            try room.engine.takeBack(room.batchRows, marks: room.batchMarks, to: version, app: app)
        } catch {
            return abandon(room, on: server, because: error.description)
        }
        if !room.engine.views.isEmpty { room.engine.views.reset(to: (try? room.engine.store.stateJSON()) ?? .null) }
    }

    // MARK: - Catch-ups and following

    /// `SharedLogPipeline.catchUp` up to its read; false when it was deferred at once.
    func startCatchUp(_ room: SimulatedRoom, _ purpose: CatchUpRead.Purpose, on server: SimulatedServer) -> Bool {
        let version = room.engine.store.version
        guard catchUpGoesOn(room.machine.catchUp(after: version, version: version), room, on: server) else {
            return false
        }
        let id = makeID()
        reads[id] = CatchUpRead(
            server: server.index, incarnation: server.incarnation, room: room.id, name: room.name, purpose: purpose,
            after: room.engine.store.version)
        tasks.append(.read(id))
        return true
    }

    func readAtDatabase(_ id: Int) {
        guard var read = reads[id] else { return }
        if !log.isDown(at: step) { read.rows = log.rows(of: read.name, after: read.after) }
        reads[id] = read
        tasks.append(.readDone(id))
    }

    /// The read's result reaches the server: `SharedLogPipeline.catchUp` after its read, then the pump or following
    /// goes on.
    func readDone(_ id: Int) {
        guard let read = reads.removeValue(forKey: id),
            let room = liveRoom(read.server, read.incarnation, read.room, read.name)
        else { return }
        let server = servers[read.server]
        var outcome = SharedLogPipeline.CatchUp.failed
        if let rows = read.rows {
            if catchUpGoesOn(
                room.machine.catchUp(after: read.after, version: room.engine.store.version), room, on: server)
            {
                outcome = applyCommitted(rows, to: room, on: server) ? .caughtUp : .failed
            } else {
                outcome = .deferred
            }
        }
        guard server.rooms[room.name] === room else { return }
        switch read.purpose {
        case .pump:
            if case .retryCatchUp = room.machine.catchUpFinished(failed: outcome == .failed) {
                tasks.append(
                    .retryDue(server: server.index, incarnation: server.incarnation, room: room.id, name: room.name))
            } else {
                runPump(room, on: server)
            }
        case .follow:
            if outcome == .caughtUp {
                continueFollowing(room, on: server)
            } else {
                room.machine.followingFinished()
            }
        }
    }

    /// `SharedLogPipeline.committed`: another server announced `version`.
    func committed(_ name: String, version: Int, on server: SimulatedServer) {
        guard let room = server.rooms[name], version > room.engine.store.version else { return }
        room.machine.announced(version: version)
        wake(room, on: server)
        guard room.machine.startFollowing() else { return }
        continueFollowing(room, on: server)
    }

    private func continueFollowing(_ room: SimulatedRoom, on server: SimulatedServer) {
        let active = server.rooms[room.name] === room
        guard room.machine.followsOn(version: room.engine.store.version, roomActive: active) else { return }
        if !startCatchUp(room, .follow, on: server) { room.machine.followingFinished() }
    }

    /// Whether the catch-up goes on; when not, the pump checks later (`SharedLogPipeline.checkLater`).
    private func catchUpGoesOn(
        _ decision: SharedLogMachine.CatchUpDecision, _ room: SimulatedRoom, on server: SimulatedServer
    ) -> Bool {
        if decision == .checkLater(.startPump) { schedulePump(room, on: server) }
        return decision == .apply
    }

    /// `SharedLogPipeline.applyCommitted`: the real ``CommittedReplay``, and the stored bytes to the room's clients.
    func applyCommitted(_ rows: [StoredChange], to room: SimulatedRoom, on server: SimulatedServer) -> Bool {
        let published = room.engine.apply(committed: rows, app: app)
        for patch in published.patches { broadcast(patch, in: room) }
        guard let failure = published.failure else { return true }
        abandon(room, on: server, because: failure)
        return false
    }

    // MARK: - Servers' lives

    /// The process dies: its memory, connections, transactions (their connections close, so they roll back) and
    /// notices not yet sent are gone.
    func kill(_ server: SimulatedServer) {
        note("server \(server.index) is killed")
        server.alive = false
        // A write to its own log in flight lands, or does not; no one hears of it.
        if let write = server.localWrite, chance(500) {
            note("server \(server.index)'s write in flight lands")
            store(write)
        }
        server.localWrite = nil
        server.queue = DurabilityQueue()
        server.rooms = [:]
        server.timers = TimerSchedule()
        server.publications = [:]
        for id in connections.keys.sorted() where connections[id]!.server == server.index {
            let connection = connections[id]!
            connection.cut()
            if clients[connection.client].connection == id { clients[connection.client].lost() }
        }
        for id in transactions.keys.sorted() where transactions[id]!.server == server.index {
            ended(transactions[id]!, committed: false, uncertain: false)
        }
    }

    func restart(_ server: SimulatedServer) {
        note("server \(server.index) starts")
        server.alive = true
        server.incarnation += 1
        loadTimers(on: server)
    }

    /// The renewal loop: the rooms with clients compare their versions with the log's.
    func renew(_ server: SimulatedServer) {
        // A server with a log of its own has no one to follow, and its book alone holds its timers.
        guard server.alive, !localLog, !log.isDown(at: step) else { return }
        note("server \(server.index) renews")
        loadTimers(on: server)
        for room in server.sortedRooms where !room.connections.isEmpty {
            committed(room.name, version: log.version(of: room.name), on: server)
            readPeers(of: room, on: server)
        }
    }

    /// A room no client uses, with nothing running, leaves a server's memory.
    func evictSomething() {
        let idle = servers.filter(\.alive).flatMap { server in
            server.sortedRooms.filter { room in
                room.connections.isEmpty && room.machine.isIdle && room.transaction == nil
                    && !waitsForLog(room, on: server)
            }
            .map { (server, $0) }
        }
        guard let (server, room) = idle.randomElement(using: &random) else { return }
        note("server \(server.index) evicts \(room.name)")
        server.rooms[room.name] = nil
    }
}
