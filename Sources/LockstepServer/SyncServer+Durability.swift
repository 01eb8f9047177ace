import Dispatch
import CoreMetrics
import Logging
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

extension SyncServer {
    /// Sends a change's patch now (in memory) or once the log has it.
    func commit(_ patch: Room.LoggedPatch, in room: Room, message: [UInt8], inverse: JSONPatch) {
        room.timeline.record(version: patch.version, inverse: inverse, stored: room.releasedVersion)
        guard log != nil else {
            broadcast(patch, in: room)
            return
        }
        let writes = self.writes(of: room)
        writes.rows.append(
            StoredChange(room: room.name, version: patch.version, message: message, inverse: inverse.serialized())
        )
        writes.pending.append(.patch(room, patch))
        storeEpoch(of: room)
        room.changesSinceSnapshot += 1
        if room.changesSinceSnapshot >= configuration.snapshotInterval { queueSnapshot(of: room) }
        scheduleWrite(of: room)
    }

    /// The queue `room`'s writes wait in: the server's, or on shared storage the room's own.
    func writes(of room: Room) -> DurabilityQueue {
        shared == nil ? durability : room.writes
    }

    /// Queues a reply behind every patch and reply still waiting for the log, so order is kept.
    func reply(_ frame: OutboundFrame, to session: Session) {
        if shared != nil {
            replyInTurn(frame, to: session)
        } else if durability.isIdle {
            session.reply(frame)
        } else {
            durability.pending.append(.reply(session, frame))
        }
    }

    /// Has the next write store `room`'s state and history, so a load replays only what comes after.
    func queueSnapshot(of room: Room) {
        guard let snapshot = snapshot(of: room) else { return }
        writes(of: room).snapshots.append(snapshot)
        room.changesSinceSnapshot = 0
    }

    private func snapshot(of room: Room) -> StoredSnapshot? {
        do {
            return StoredSnapshot(
                room: room.name, version: room.store.version, state: try room.store.stateJSON().serialized(),
                history: HistoryCoding.encode(room.store.history)
            )
        } catch {
            logger.error("cannot snapshot a room", metadata: ["room": "\(room.name)", "error": "\(error)"])
            return nil
        }
    }

    /// Has `room`'s waiting writes stored: with the server's next write, or on shared storage by the room's own.
    func scheduleWrite(of room: Room) {
        if shared != nil {
            pump(room)
        } else {
            scheduleWrite()
        }
    }

    /// Starts a write after the current callback, so changes arriving together share one transaction.
    private func scheduleWrite() {
        guard !durability.writeScheduled, durability.inFlight == nil else { return }
        durability.writeScheduled = true
        Task { self.startWrite() }
    }

    private func startWrite() {
        durability.writeScheduled = false
        guard durability.inFlight == nil, let log else { return }
        guard durability.hasWrites else { return releasePending() }
        let (rows, snapshots, sessions) = durability.takeWrite(sessions: sessionWrites())
        let keepHistory = configuration.keepHistory
        writer.async { [sessions] in
            let result = Result { () throws(StorageError) in
                try log.append(changes: rows, snapshots: snapshots, sessions: sessions, keepHistory: keepHistory)
            }
            // Straight onto the loop, not through the shared task pool: a pool kept busy by the embedding
            // program's blocking work would otherwise hold every ack back.
            self.transport.loop.execute { self.assumeIsolated { $0.finishWrite(result, sessions: sessions) } }
        }
    }

    private func finishWrite(_ result: Result<Void, StorageError>, sessions: SessionWrites) {
        let marks = sessions.marks
        let written = durability.finished()
        switch result {
        case .success:
            marksStored(marks)
            release(written)
        case .failure(let error):
            // Epochs not stored go with the room's next write.
            for room in sessions.epochs.keys { rooms[room]?.epochStored = false }
            fail(written, marks: marks, because: error)
        }
        // An eviction waits for its room's snapshot like a reply for its change.
        if durability.hasWrites {
            scheduleWrite()
        } else {
            releasePending()
        }
    }

    /// Sends replies that waited only for a write that has now finished (no change of theirs is pending).
    private func releasePending() {
        let items = durability.pending
        durability.pending.removeAll()
        release(items)
    }

    /// How the next write treats session marks.
    func sessionWrites() -> SessionWrites {
        SessionWrites(idleSeconds: configuration.sessionIdle.seconds, limit: configuration.sessionLimit)
    }

    func release(_ items: [DurabilityQueue.Release]) {
        for item in items {
            switch item {
            case .patch(let room, let patch): broadcast(patch, in: room)
            case .reply(let session, let frame): session.reply(frame)
            case .evict(let room, let version): evict(room, at: version)
            }
        }
    }

    /// A write failed: nothing of it is acknowledged. Its rooms go back to what the log has,
    /// and their clients are told and disconnected, so they reconnect to the stored state.
    private func fail(_ items: [DurabilityQueue.Release], marks: [StoredMark], because error: StorageError) {
        var affected: [String: Room] = [:]
        for case .patch(let room, _) in items { affected[room.name] = room }
        for case .evict(let room, _) in items { affected[room.name] = room }
        for mark in marks { affected[mark.room] = rooms[mark.room] }
        logger.error("cannot store changes", metadata: ["error": "\(error)", "rooms": "\(affected.keys.sorted())"])

        let untouched = { (room: Room) in affected[room.name] == nil }
        release(
            items.filter { item in
                if case .reply(let session, _) = item { return untouched(session.room) }
                return false
            })
        durability.pending.removeAll { item in
            switch item {
            case .patch(let room, _), .evict(let room, _): !untouched(room)
            case .reply(let session, _): !untouched(session.room)
            }
        }
        durability.rows.removeAll { affected[$0.room] != nil }
        durability.snapshots.removeAll { affected[$0.room] != nil }
        durability.marks.removeAll { affected[$0.room] != nil }

        let notice = ServerMessage.error(
            id: nil, code: "rejected",
            message: "changes could not be stored (\(error)); reconnect to get the stored state"
        )
        for room in affected.values { drop(room, telling: notice, reason: "storage failure") }
    }

    /// Takes `room` out of memory and sends its clients away with `notice`: they reconnect to what storage has.
    func drop(_ room: Room, telling notice: ServerMessage, reason: String) {
        rooms[room.name] = nil
        metrics.rooms.decrement()
        for session in room.sessions { sendAway(session, telling: notice, reason: reason) }
    }

    /// Closes a client's connection (1011) after `notice`; the room forgets it at once.
    func sendAway(_ session: Session, telling notice: ServerMessage, reason: String) {
        session.connection.context = nil
        session.connection.send(OutboundFrame(text: notice.serialized()))
        session.connection.close(code: 1011, reason: reason)
        connectionClosed(session)
    }
}
