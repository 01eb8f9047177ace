import Foundation
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport
import Logging

/// Rooms in a database several servers share (PostgreSQL): each room's requests are applied and committed while the
/// storage holds the room against every other server, after what they committed before; what they commit reaches
/// this server's clients as the stored bytes. No server owns a room, so any of them may stop at any time.
///
/// Loop-bound: every method is isolated to the server. It is `Sendable` only so that the storage's locked write can
/// call back into ``prepare(_:_:_:_:server:)``, which runs isolated to the server like everything else.
final class SharedLogPipeline: LoggingPipeline, @unchecked Sendable {
    let storage: any SharedRoomStorage
    /// Per room in memory, by identity: a room read again after it was dropped starts afresh.
    private(set) var states: [ObjectIdentifier: SharedRoomState] = [:]
    /// This server's clients of each room as published, by name: one publisher whatever copy of the room is in
    /// memory; kept while a publication runs or what it published lists clients.
    var publications: [String: PresencePublication] = [:]

    init(storage: any SharedRoomStorage) {
        self.storage = storage
    }

    var log: any RoomStorage { storage }

    var isAvailable: Bool { storage.isAvailable }
    var evictsIdleRooms: Bool { true }
    /// Other servers' commits still being followed do not count: only what this server's clients sent.
    var isSettled: Bool { states.values.allSatisfy(\.isSettled) }

    /// The server's number makes the id distinct among every server's clients of a room.
    func clientID(_ number: Int) -> String { "c\(number)-\(storage.node)" }

    /// The state of `room`, kept while the room is in memory (``forget(_:)`` ends it). A room that left memory (a
    /// client's leave action after its room was dropped, a join's catch-up of a room evicted meanwhile) gets a state
    /// that nothing keeps: kept, it would outlive the room, and a later room at the same address would be handed it.
    func state(of room: Room, server: isolated some RoomHost) -> SharedRoomState {
        if let state = states[ObjectIdentifier(room)] { return state }
        let state = SharedRoomState()
        if server.rooms[room.name] === room { states[ObjectIdentifier(room)] = state }
        return state
    }

    func forget(_ room: Room) {
        states[ObjectIdentifier(room)] = nil
    }

    func isIdle(_ room: Room) -> Bool {
        states[ObjectIdentifier(room)]?.isIdle ?? true
    }

    func remotePeers(of room: Room) -> [Peer] {
        states[ObjectIdentifier(room)]?.presence.remote ?? []
    }

    // MARK: - Requests and writes

    /// Applied in the room's next locked write, after what other servers committed before it.
    func submit(_ input: RoomInput, to room: Room, server: isolated some RoomHost) {
        let state = state(of: room, server: server)
        if state.queue.receive(input) == .startPump { startPump(room, state, server: server) }
    }

    func commit(
        _ patch: Room.LoggedPatch, message: [UInt8], record: ChangeRecord, in room: Room, server: isolated some RoomHost
    ) {
        state(of: room, server: server).writes.append(
            patch, message: message, record: record, in: room, configuration: server.configuration,
            logger: server.logger)
    }

    func markMoved(_ mark: StoredMark, in room: Room, server: isolated some RoomHost) {
        state(of: room, server: server).writes.marks.append(mark)
    }

    /// A reply goes out now unless something the room received before it is still waiting or being written.
    func reply(_ answer: RequestAnswer, to requester: any Requester, server: isolated some RoomHost) {
        let room = requester.room
        let state = state(of: room, server: server)
        switch state.queue.route((requester, answer), writesIdle: state.writes.isIdle) {
        case .holdWithWrite:
            state.writes.pending.append(.reply(requester, answer))
        case .send:
            requester.answer(answer)
        case .queued(let wake):
            if wake == .startPump { startPump(room, state, server: server) }
        }
    }

    /// Everything the room did is committed: it may go at once.
    func evict(_ room: Room, server: isolated some RoomHost) {
        server.handle(.evictable(room, version: room.engine.store.version))
    }

    /// Runs the room's writes and catch-ups, one at a time, until nothing waits.
    func pump(_ room: Room, server: isolated some RoomHost) {
        let state = state(of: room, server: server)
        if state.queue.machine.wake() == .startPump { startPump(room, state, server: server) }
    }

    /// The room's one task of writes and catch-ups: it does what the machine says, step by step, until it says idle.
    func startPump(_ room: Room, _ state: SharedRoomState, server: isolated some RoomHost) {
        Task {
            while true {
                let step = state.queue.next(
                    roomActive: !server.isStopped && server.rooms[room.name] === room,
                    hasWrites: state.writes.hasWrites, version: room.engine.store.version)
                switch step {
                case .write(let attempt, let marks):
                    await write(room, state, attempt: attempt, marks: marks, server: server)
                case .send(let replies):
                    for (requester, answer) in replies { requester.answer(answer) }
                case .catchUp:
                    let failed = await catchUp(room, server: server) == .failed
                    if case .retryCatchUp(let delay) = state.queue.machine.catchUpFinished(failed: failed) {
                        try? await server.clock.sleep(for: delay)
                        state.queue.machine.retryDue()
                    }
                case .idle:
                    server.handle(.idle(room))
                    return
                }
            }
        }
    }

    /// One locked write: what other servers committed, then everything the room received, committed together.
    private func write(
        _ room: Room, _ state: SharedRoomState, attempt: Int, marks: [String], server: isolated some RoomHost
    ) async {
        state.batchRows = []
        state.batchMarks = []
        state.batchEpoch = false
        let name = room.name
        let id = ObjectIdentifier(room)
        do throws(StorageError) {
            try await storage.write(room: name, after: room.engine.store.version, sessions: marks) { catchUp in
                await self.prepare(name, id, attempt, catchUp, server: server)
            }
        } catch {
            server.logger.error("cannot commit a room", metadata: ["room": "\(room.name)", "error": "\(error)"])
            var uncertain = false
            if case .uncertain = error { uncertain = true }
            return end(state.queue.writeFailed(uncertain: uncertain), of: room, state, server: server)
        }
        end(state.queue.writeFinished(), of: room, state, server: server)
    }

    /// Ends the write in flight as the machine decided.
    ///
    /// A committed write releases what it held back. A failed one answers its requests `unavailable` (nothing of them
    /// was applied), after taking back a batch already applied to the room, so the room is again what its clients
    /// have (the next catch-up brings back what was committed after all). A write whose COMMIT went unanswered may
    /// have been stored: `unavailable` would tell its senders that nothing was, and they could send a change again
    /// that is already there. They are sent away instead, to resume and send it again with its `seq`, which is then
    /// recognised if it was stored.
    private func end(
        _ ending: SharedRoomQueue<RoomInput, SharedRoomState.Reply>.Ending, of room: Room, _ state: SharedRoomState,
        server: isolated some RoomHost
    ) {
        let written = state.writes.finished()
        switch ending.end {
        case .release:
            room.engine.store.releaseHistoryCheckpoint()
            for mark in state.batchMarks { room.engine.marks.stored(mark) }
            server.handle(.released(written))
        case .answerUnavailable(let base), .sendAway(let base):
            if let base { rollBack(room, state, to: base, server: server) }
            answerFailed(ending, in: room, server: server)
        }
    }

    /// Inside the locked write: applies what others committed, then the batch; returns what to commit.
    func prepare(
        _ name: String, _ id: ObjectIdentifier, _ attempt: Int, _ catchUp: RoomCatchUp, server: isolated some RoomHost
    ) -> RoomWrite {
        let nothing = RoomWrite(changes: [], snapshots: [], sessions: server.configuration.sessionWrites)
        guard let room = server.rooms[name], ObjectIdentifier(room) == id,
            state(of: room, server: server).queue.prepare(attempt: attempt)
        else {
            return nothing
        }
        guard applyCommitted(catchUp.missed, to: room, server: server) else {
            // The room cannot continue from what it holds: nothing is applied, and it is read again.
            abandon(room, because: "its log could not be followed", server: server)
            return nothing
        }
        if let epoch = catchUp.epoch {
            room.epoch = epoch
            room.epochStored = true
        }
        for mark in catchUp.marks { room.engine.marks.adopt(mark) }
        room.engine.loggedTimers = catchUp.timers
        let state = state(of: room, server: server)
        // A failed commit takes the batch back to here.
        room.engine.store.setHistoryCheckpoint()
        for item in state.queue.applyBatch(from: room.engine.store.version) {
            switch item {
            case .input(let input):
                server.handle(.turn(input, room))
            case .reply(let reply):
                state.writes.pending.append(.reply(reply.requester, reply.answer))
            }
        }
        state.queue.batchApplied()
        if !room.epochStored {
            room.epochStored = true
            state.writes.epochs[room.name] = room.epoch
        }
        let (rows, snapshots, sessions) = state.writes.takeWrite(sessions: server.configuration.sessionWrites)
        state.batchRows = rows
        state.batchMarks = sessions.marks
        state.batchEpoch = !sessions.epochs.isEmpty
        return RoomWrite(changes: rows, snapshots: snapshots.map { $0.encoded() }, sessions: sessions)
    }

    /// Answers the requests of a write that failed, and sends away the connections whose requests may have been
    /// committed after all, in the batch's order (``SharedRoomQueue/Ending/failures``).
    private func answerFailed(
        _ ending: SharedRoomQueue<RoomInput, SharedRoomState.Reply>.Ending, in room: Room,
        server: isolated some RoomHost
    ) {
        let notice = ServerMessage.error(
            id: nil, code: "unavailable", message: "whether a request was stored is unknown: reconnect and resume")
        for answer in ending.answers(marks: &room.engine.marks, now: Date().timeIntervalSince1970) {
            switch answer {
            case .sendAway(let connection):
                // One already sent away (its changes were taken back) has left the room.
                guard let session = room.sessions.first(where: { ObjectIdentifier($0) == connection }) else { continue }
                server.handle(.sessionLost(session, notice: notice, reason: "a request's outcome is unknown"))
            case .duplicate(.request(let request, let requester, _)):
                requester.answer(.ack(id: request.message.id, version: room.engine.store.version, duplicate: true))
            case .unknown(.request(let request, let requester, _)):
                requester.answer(
                    .error(
                        id: request.message.id, code: "unavailable",
                        message:
                            "whether the request was stored is unknown: send it again with the same Idempotency-Key"))
            case .unavailable(.request(let request, let requester, _)):
                requester.answer(
                    .error(id: request.message.id, code: "unavailable", message: RequestAnswer.unavailable))
            case .unknown(.effect(let action, _)), .unavailable(.effect(let action, _)):
                server.logger.warning(
                    "an effect's action is lost", metadata: ["room": "\(room.name)", "action": "\(action.json)"])
            case .unknown(.membership(let action, _, let kind)), .unavailable(.membership(let action, _, let kind)):
                server.logger.warning(
                    "an app's \(kind.rawValue) action is lost",
                    metadata: ["room": "\(room.name)", "action": "\(action)"])
            case .unknown(.timer), .unavailable(.timer):
                // A timer is still in the log: the next read of the log's timers arms it again.
                break
            case .duplicate:
                // Only a request carries a `seq`.
                break
            case .send(let reply):
                reply.requester.answer(reply.answer)
            }
        }
    }

    /// Takes back the changes, marks and epoch of a batch applied on top of `version` that was not committed (or may
    /// not have been: then the next catch-up brings back what was). Clients that joined meanwhile saw them, and are
    /// sent away to resume.
    private func rollBack(_ room: Room, _ state: SharedRoomState, to version: Int, server: isolated some RoomHost) {
        do throws(StoreRollback.Failure) {
            try room.engine.takeBack(
                state.batchRows, marks: state.batchMarks, to: version, app: server.configuration.app)
        } catch {
            return abandon(room, because: error.description, server: server)
        }
        room.forgetEncodedState()
        room.resetViews()
        room.changesSinceSnapshot = max(0, room.changesSinceSnapshot - state.batchRows.count)
        if state.batchEpoch { room.epochStored = false }
        let notice = ServerMessage.error(id: nil, code: "unavailable", message: "reconnect to resume")
        for session in room.sessions where session.syncedVersion > version {
            server.handle(.sessionLost(session, notice: notice, reason: "the changes it was sent were taken back"))
        }
    }

    /// Drops a room whose memory cannot be trusted; its clients are told and disconnected, and resume from the log.
    func abandon(_ room: Room, because reason: String, server: isolated some RoomHost) {
        let notice = ServerMessage.error(
            id: nil, code: "unavailable", message: "the room must be read again (\(reason)); reconnect")
        server.handle(.roomLost(room, notice: notice, reason: "room reloading"))
    }
}
