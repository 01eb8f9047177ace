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
    private var states: [ObjectIdentifier: SharedRoomState] = [:]

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

    func state(of room: Room) -> SharedRoomState {
        if let state = states[ObjectIdentifier(room)] { return state }
        let state = SharedRoomState()
        states[ObjectIdentifier(room)] = state
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
        enqueue(.input(input), in: room, server: server)
    }

    private func enqueue(_ item: SharedRoomState.Incoming, in room: Room, server: isolated some RoomHost) {
        let state = state(of: room)
        state.incoming.append(item)
        if state.machine.received(needsWrite: item.needsWrite) == .startPump { startPump(room, state, server: server) }
    }

    func commit(
        _ patch: Room.LoggedPatch, message: [UInt8], record: ChangeRecord, in room: Room, server: isolated some RoomHost
    ) {
        let writes = state(of: room).writes
        writes.rows.append(
            StoredChange(room: room.name, version: patch.version, message: message, record: record.serialized()))
        writes.pending.append(.patch(room, patch))
        writes.snapshots += server.initialSnapshot(of: room, storing: patch.version)
        room.changesSinceSnapshot += 1
        if room.changesSinceSnapshot >= server.configuration.snapshotInterval, let snapshot = server.snapshot(of: room)
        {
            writes.snapshots.append(snapshot)
        }
    }

    func markMoved(_ mark: StoredMark, in room: Room, server: isolated some RoomHost) {
        state(of: room).writes.marks.append(mark)
    }

    /// A reply goes out now unless something the room received before it is still waiting or being written.
    func reply(_ answer: RequestAnswer, to requester: any Requester, server: isolated some RoomHost) {
        let room = requester.room
        let state = state(of: room)
        switch state.machine.replyReady(writesIdle: state.writes.isIdle) {
        case .holdWithWrite:
            state.writes.pending.append(.reply(requester, answer))
        case .answerNow:
            requester.answer(answer)
        case .queue(let wake):
            state.incoming.append(.reply(requester, answer))
            if wake == .startPump { startPump(room, state, server: server) }
        }
    }

    /// Everything the room did is committed: it may go at once.
    func evict(_ room: Room, server: isolated some RoomHost) {
        server.evict(room, at: room.store.version)
    }

    /// Runs the room's writes and catch-ups, one at a time, until nothing waits.
    func pump(_ room: Room, server: isolated some RoomHost) {
        let state = state(of: room)
        if state.machine.wake() == .startPump { startPump(room, state, server: server) }
    }

    /// The room's one task of writes and catch-ups: it does what the machine says, step by step, until it says idle.
    private func startPump(_ room: Room, _ state: SharedRoomState, server: isolated some RoomHost) {
        Task {
            while true {
                let step = state.machine.next(
                    roomActive: !server.isStopped && server.rooms[room.name] === room,
                    hasWrites: state.writes.hasWrites, version: room.store.version)
                switch step {
                case .startWrite(let attempt):
                    await write(room, state, attempt: attempt, server: server)
                case .flushReplies:
                    let replies = state.incoming
                    state.incoming.removeAll()
                    for case .reply(let requester, let answer) in replies { requester.answer(answer) }
                case .startCatchUp:
                    let failed = await catchUp(room, server: server) == .failed
                    if case .retryCatchUp(let delay) = state.machine.catchUpFinished(failed: failed) {
                        try? await server.clock.sleep(for: delay)
                        state.machine.retryDue()
                    }
                case .idle:
                    server.roomBecameIdle(room)
                    return
                }
            }
        }
    }

    /// One locked write: what other servers committed, then everything the room received, committed together.
    private func write(_ room: Room, _ state: SharedRoomState, attempt: Int, server: isolated some RoomHost) async {
        state.batch = state.incoming
        state.incoming.removeAll()
        state.batchRows = []
        state.batchMarks = []
        state.batchEpoch = false
        let sessions = Array(Set(state.batch.compactMap(\.markName)))
        let name = room.name
        let id = ObjectIdentifier(room)
        do throws(StorageError) {
            try await storage.write(room: name, after: room.store.version, sessions: sessions) { catchUp in
                await self.prepare(name, id, attempt, catchUp, server: server)
            }
        } catch {
            server.logger.error("cannot commit a room", metadata: ["room": "\(room.name)", "error": "\(error)"])
            var uncertain = false
            if case .uncertain = error { uncertain = true }
            return end(state.machine.writeFailed(uncertain: uncertain), of: room, state, server: server)
        }
        end(state.machine.writeFinished(), of: room, state, server: server)
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
        _ end: SharedLogMachine.WriteEnd, of room: Room, _ state: SharedRoomState, server: isolated some RoomHost
    ) {
        let batch = state.batch
        state.batch.removeAll()
        let written = state.writes.finished()
        switch end {
        case .release:
            room.store.releaseHistoryCheckpoint()
            server.marksStored(state.batchMarks)
            server.release(written)
        case .answerUnavailable(let base):
            if let base { rollBack(room, state, to: base, server: server) }
            answerFailed(batch, in: room, uncertain: false, server: server)
        case .sendAway(let base):
            if let base { rollBack(room, state, to: base, server: server) }
            answerFailed(batch, in: room, uncertain: true, server: server)
        }
    }

    /// Inside the locked write: applies what others committed, then the batch; returns what to commit.
    func prepare(
        _ name: String, _ id: ObjectIdentifier, _ attempt: Int, _ catchUp: RoomCatchUp, server: isolated some RoomHost
    ) -> RoomWrite {
        let nothing = RoomWrite(changes: [], snapshots: [], sessions: server.sessionWrites())
        guard let room = server.rooms[name], ObjectIdentifier(room) == id,
            state(of: room).machine.prepareCalled(attempt: attempt) == .apply
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
        for mark in catchUp.marks { room.marks.adopt(mark) }
        room.loggedTimers = catchUp.timers
        let state = state(of: room)
        state.machine.applyingBatch(from: room.store.version)
        // A failed commit takes the batch back to here.
        room.store.setHistoryCheckpoint()
        for item in state.batch {
            switch item {
            case .input(let input):
                server.apply(input, in: room)
            case .reply(let requester, let answer):
                state.writes.pending.append(.reply(requester, answer))
            }
        }
        state.machine.batchApplied()
        if !room.epochStored {
            room.epochStored = true
            state.writes.epochs[room.name] = room.epoch
        }
        let (rows, snapshots, sessions) = state.writes.takeWrite(sessions: server.sessionWrites())
        state.batchRows = rows
        state.batchMarks = sessions.marks
        state.batchEpoch = !sessions.epochs.isEmpty
        return RoomWrite(changes: rows, snapshots: snapshots.map { $0.encoded() }, sessions: sessions)
    }

    /// Answers the requests of a write that failed; `uncertain` when it may have been committed.
    private func answerFailed(
        _ batch: [SharedRoomState.Incoming], in room: Room, uncertain: Bool, server: isolated some RoomHost
    ) {
        var away: [Session] = []
        for item in batch {
            switch item {
            case .input(.request(_, let session as Session, _)) where uncertain:
                if !away.contains(where: { $0 === session }) { away.append(session) }
            case .input(.request(let request, let requester, _)) where uncertain:
                requester.answer(
                    .error(
                        id: request.message.id, code: "unavailable",
                        message:
                            "whether the request was stored is unknown: send it again with the same Idempotency-Key"))
            case .input(.request(let request, let requester, _)):
                if let seq = request.seq, let name = requester.sessionName,
                    room.marks.writeFailed(seq, of: name.value, now: Date().timeIntervalSince1970) == .duplicate
                {
                    requester.answer(.ack(id: request.message.id, version: room.store.version, duplicate: true))
                    continue
                }
                requester.answer(
                    .error(id: request.message.id, code: "unavailable", message: RequestAnswer.unavailable))
            case .input(.effect(let action, _)):
                server.logger.warning(
                    "an effect's action is lost", metadata: ["room": "\(room.name)", "action": "\(action.json)"])
            case .input(.timer):
                // Still in the log: the next read of the log's timers arms it again.
                break
            case .input(.membership(let action, _, let kind)):
                server.logger.warning(
                    "an app's \(kind.rawValue) action is lost",
                    metadata: ["room": "\(room.name)", "action": "\(action)"])
            case .reply(let requester, let answer):
                requester.answer(answer)
            }
        }
        // What these connections sent after it is not applied either: its `seq` would move the session's mark past
        // a request that may not be stored, and the resumed client would not send that one again.
        state(of: room).incoming.removeAll { item in
            guard case .input(.request(_, let session as Session, _)) = item else { return false }
            return away.contains { $0 === session }
        }
        let notice = ServerMessage.error(
            id: nil, code: "unavailable", message: "whether a request was stored is unknown: reconnect and resume")
        for session in away where session.connection.context as? Session === session {
            server.sendAway(session, telling: notice, reason: "a request's outcome is unknown")
        }
    }

    /// Takes back the changes, marks and epoch of a batch applied on top of `version` that was not committed (or may
    /// not have been: then the next catch-up brings back what was). Clients that joined meanwhile saw them, and are
    /// sent away to resume.
    private func rollBack(_ room: Room, _ state: SharedRoomState, to version: Int, server: isolated some RoomHost) {
        do throws(StoreRollback.Failure) {
            room.store = try StoreRollback.rollingBack(
                room.store, changes: state.batchRows, to: version, app: server.configuration.app)
        } catch {
            return abandon(room, because: error.description, server: server)
        }
        room.timeline.forget(after: version)
        room.forgetEncodedState()
        room.resetViews()
        room.changesSinceSnapshot = max(0, room.changesSinceSnapshot - state.batchRows.count)
        for mark in state.batchMarks { room.marks.rollBack(mark.session) }
        if state.batchEpoch { room.epochStored = false }
        let notice = ServerMessage.error(id: nil, code: "unavailable", message: "reconnect to resume")
        for session in room.sessions where session.syncedVersion > version {
            server.sendAway(session, telling: notice, reason: "the changes it was sent were taken back")
        }
    }

    /// Drops a room whose memory cannot be trusted; its clients are told and disconnected, and resume from the log.
    func abandon(_ room: Room, because reason: String, server: isolated some RoomHost) {
        guard server.rooms[room.name] === room else { return }
        let notice = ServerMessage.error(
            id: nil, code: "unavailable", message: "the room must be read again (\(reason)); reconnect")
        server.drop(room, telling: notice, reason: "room reloading")
    }
}
