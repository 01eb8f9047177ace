import LockstepStorage
@testable import LockstepServer

/// A server with a log of its own (SQLite), as ``LocalLogPipeline`` runs it around the real ``DurabilityQueue``: a
/// request is applied at once; its patch and answer wait for the group commit that stores its change (one write at a
/// time, for every room, with all that arrived meanwhile); a write the disk refuses drops the rooms it stored
/// something of, sends their clients away and reads their timers again, and a killed server loses what waited, while
/// the write in flight when it died lands or not.
extension ClusterSimulation {
    /// `LocalLogPipeline.commit`, `markMoved` and `timersChanged` for what a request just made: into the queue.
    func enqueue(_ room: SimulatedRoom, on server: SimulatedServer) {
        // The room's own queue only gathered what the request made; its timer changes go over in their order.
        var rows = room.writes.takeWrite(sessions: SimulatedRoom.sessionWrites).rows[...]
        for release in room.writes.finished() {
            if case .patch = release.held, let row = rows.popFirst() {
                server.queue.append(row, holding: release, snapshots: [])
            } else {
                server.queue.pending.append(release)
            }
        }
        server.queue.marks += room.batchMarks
        for op in room.batchTimerOps { server.queue.timerChanged(op, in: room.name) }
        let offset = room.unwritten.timerOps.count
        room.unwritten.states += room.batchStates
        room.unwritten.requests += room.batchRequests
        room.unwritten.timerOps += room.batchTimerOps
        room.unwritten.cancels += room.batchCancels.map { ($0.name, $0.at + offset) }
        room.clearBatch()
        scheduleLocalWrite(on: server)
    }

    /// `LocalLogPipeline.reply`: at once when nothing waits for the log.
    func replyLocally(_ frame: ServerFrame, to connection: Int, in room: SimulatedRoom, on server: SimulatedServer) {
        guard server.queue.isIdle else {
            let answer = SimulatedRelease(room: room, held: .answer(connection: connection, frame))
            return server.queue.pending.append(answer)
        }
        send(frame, to: connection)
    }

    /// `LocalLogPipeline.scheduleWrite`: a write starts after the current step unless one is due or in flight.
    private func scheduleLocalWrite(on server: SimulatedServer) {
        guard server.queue.writeWanted() else { return }
        tasks.append(.localWrite(server: server.index, incarnation: server.incarnation))
    }

    /// `LocalLogPipeline.write`, through the queue's own group commit: everything waiting, of every room, goes into
    /// one write; with nothing to write, what waited only for the write that ended goes out.
    func startLocalWrite(on server: SimulatedServer) {
        switch server.queue.startWrite(sessions: SimulatedRoom.sessionWrites) {
        case nil:
            return
        case .release(let items):
            release(items)
        case .write(let rows, _, let sessions):
            var checks: [String: LocalWrite.Checks] = [:]
            for room in server.sortedRooms where !room.unwritten.isEmpty {
                checks[room.name] = room.unwritten
                room.unwritten = LocalWrite.Checks()
            }
            server.localWrite = LocalWrite(rows: rows, sessions: sessions, checks: checks)
            tasks.append(.localWritten(server: server.index, incarnation: server.incarnation))
        }
    }

    /// The write returns: stored, what it held back goes out in order; refused, `LocalLogPipeline.fail`. Then the
    /// next write, as the pipeline's loop goes on.
    func localWriteReturned(on server: SimulatedServer) {
        guard let write = server.localWrite else { return }
        server.localWrite = nil
        let stored = !(faultsOn && chance(faults.failedCommit))
        switch server.queue.writeReturned(stored: stored, sessions: write.sessions) {
        case .stored(let written):
            store(write)
            for mark in write.sessions.marks { server.rooms[mark.room]?.engine.marks.stored(mark) }
            release(written)
        case .failed(let released, let rooms, let written):
            release(released)
            localWriteFailed(rooms, of: written, on: server)
        }
        startLocalWrite(on: server)
    }

    /// The log takes a write, room by room, its timer rows as the log stores them: every scheduled row, then every
    /// removal. A cancel must leave no row of its name unless the room scheduled that name again after it.
    func store(_ write: LocalWrite) {
        var names = Set(write.rows.map(\.room)).union(write.sessions.marks.map(\.room)).union(write.checks.keys)
        names.formUnion(write.sessions.timers.map(\.room))
        names.formUnion(write.sessions.timersGone.map(\.room))
        for name in names.sorted() {
            let checks = write.checks[name] ?? LocalWrite.Checks()
            let (timerOps, cancels) = SimulatedLog.storedTimerOps(
                scheduled: write.sessions.timers.filter { $0.room == name },
                gone: write.sessions.timersGone.filter { $0.room == name }, batch: checks.timerOps,
                cancels: checks.cancels)
            let problems = log.append(
                write.rows.filter { $0.room == name }, states: checks.states,
                marks: write.sessions.marks.filter { $0.room == name }, requests: checks.requests, timerOps: timerOps,
                cancels: cancels, to: name, scheduledHere: SimulatedLog.scheduledHere(checks.timerOps))
            for problem in problems { violate(problem) }
        }
    }

    /// `SyncServer.release` for what the queue let out, in order.
    private func release(_ items: [SimulatedRelease]) {
        for item in items {
            switch item.held {
            case .patch(let patch): broadcast(patch, in: item.room)
            case .answer(let connection, let frame): send(frame, to: connection)
            }
        }
        var rooms: [SimulatedRoom] = []
        for item in items where !rooms.contains(where: { $0 === item.room }) { rooms.append(item.room) }
        for room in rooms {
            for server in servers where server.rooms[room.name] === room { removeFiredSeparately(room, on: server) }
        }
    }

    /// `LocalLogPipeline.fail`: nothing of the write is acknowledged. The rooms it stored something of go back to
    /// what the log has (dropped, and their clients told and sent away to resume from it), and so do their timers
    /// (forgotten, then read again: `SyncServer.rereadTimers`); the other rooms' answers go out.
    private func localWriteFailed(_ affected: Set<String>, of written: [SimulatedRelease], on server: SimulatedServer) {
        note("server \(server.index)'s write fails")
        for name in affected.sorted() {
            let (read, _) = server.timers.forget(room: name)
            tasks.append(.timersReread(server: server.index, incarnation: server.incarnation, room: name, read: read))
            guard let room = written.first(where: { $0.roomName == name })?.room ?? server.rooms[name],
                server.rooms[name] === room
            else { continue }
            server.rooms[name] = nil
            for id in room.connections { sendAway(id, from: room) }
        }
    }

    /// The read of a room's timers after a failed write returns.
    func timersReread(_ room: String, read: Int, on server: SimulatedServer) {
        let timers = log.rooms[room]!.timers
        _ = server.timers.reread(room, read: read, stored: timers.keys.sorted().map { timers[$0]! })
    }

    /// Something of `room` waits for the server's own log, or is being written.
    func waitsForLog(_ room: SimulatedRoom, on server: SimulatedServer) -> Bool {
        room.unwritten.holdsChanges || server.queue.pending.contains { $0.room === room }
            || server.queue.inFlight?.contains { $0.room === room } == true
            || server.queue.marks.contains { $0.room == room.name } || server.localWrite?.checks[room.name] != nil
    }
}
