@testable import LockstepServer

/// A server with a log of its own (SQLite), as ``LocalLogPipeline`` runs it: a request is applied at once; its patch
/// and answer wait for the group commit that stores its change (one write at a time, for every room, with all that
/// arrived meanwhile); a write the disk refuses drops the rooms it stored something of and sends their clients away,
/// and a killed server loses what waited, while the write in flight when it died lands or not.
extension ClusterSimulation {
    /// `LocalLogPipeline.scheduleWrite`: a write starts after the current step unless one is due or in flight.
    func scheduleLocalWrite(on server: SimulatedServer) {
        guard !server.writeScheduled, server.localWrite == nil, server.sortedRooms.contains(where: \.hasUnwritten)
        else { return }
        server.writeScheduled = true
        tasks.append(.localWrite(server: server.index, incarnation: server.incarnation))
    }

    /// `LocalLogPipeline.write`: everything waiting, of every room, goes into one write.
    func startLocalWrite(on server: SimulatedServer) {
        server.writeScheduled = false
        guard server.localWrite == nil else { return }
        let batches = server.sortedRooms.filter(\.hasUnwritten).map { $0.takeBatch() }
        guard !batches.isEmpty else { return }
        server.localWrite = batches
        tasks.append(.localWritten(server: server.index, incarnation: server.incarnation))
    }

    /// The write returns: stored, its patches and answers go out in order; refused, `LocalLogPipeline.fail`. Then
    /// the next write, if anything arrived meanwhile.
    func localWriteReturned(on server: SimulatedServer) {
        guard let batches = server.localWrite else { return }
        server.localWrite = nil
        if faultsOn, chance(faults.failedCommit) {
            localWriteFailed(batches, on: server)
        } else {
            for batch in batches { store(batch) }
            for batch in batches { release(batch, on: server) }
        }
        scheduleLocalWrite(on: server)
    }

    /// The read of a room's timers after a failed write returns.
    func timersReread(_ room: String, read: Int, on server: SimulatedServer) {
        let timers = log.rooms[room]!.timers
        _ = server.timers.reread(room, read: read, stored: timers.keys.sorted().map { timers[$0]! })
    }

    /// The log takes a room's part of a write.
    func store(_ batch: LocalBatch) {
        let problems = log.append(
            batch.rows, states: batch.states, marks: batch.marks, requests: batch.requests, timerOps: batch.timerOps,
            cancels: batch.cancels, to: batch.room.name)
        for problem in problems { violate(problem) }
    }

    private func release(_ batch: LocalBatch, on server: SimulatedServer) {
        let room = batch.room
        for mark in batch.marks { room.marks.stored(mark) }
        for item in batch.held {
            switch item {
            case .patch(let patch): broadcast(patch, in: room)
            case .answer(let connection, let frame): send(frame, to: connection)
            }
        }
        removeFiredSeparately(room, on: server)
    }

    /// Nothing of the write is acknowledged: the rooms it stored something of go back to what the log has (they are
    /// dropped, and their clients told and sent away to resume from it), and so do their timers (forgotten, then
    /// read again: `SyncServer.rereadTimers`); the other rooms' answers go out.
    private func localWriteFailed(_ batches: [LocalBatch], on server: SimulatedServer) {
        note("server \(server.index)'s write fails")
        for batch in batches {
            let room = batch.room
            guard batch.touchesRoom else {
                for case .answer(let connection, let frame) in batch.held { send(frame, to: connection) }
                continue
            }
            let (read, _) = server.timers.forget(room: room.name)
            tasks.append(
                .timersReread(server: server.index, incarnation: server.incarnation, room: room.name, read: read))
            guard server.rooms[room.name] === room else { continue }
            server.rooms[room.name] = nil
            for id in room.connections { sendAway(id, from: room) }
        }
    }
}
