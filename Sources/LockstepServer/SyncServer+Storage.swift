import CoreMetrics
import Logging
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// What the pipelines ask of the server once storage answered: release what waited, drop what cannot be trusted.
extension SyncServer {
    /// Sends patches, replies and evictions that waited for a write, in order.
    func release(_ items: [DurabilityQueue.Release]) {
        for item in items {
            switch item {
            case .patch(let room, let patch): broadcast(patch, in: room)
            case .reply(let requester, let answer): requester.answer(answer)
            case .evict(let room, let version): evict(room, at: version)
            }
        }
    }

    /// A write stored these marks: snapshots and resumes may report them now.
    func marksStored(_ marks: [StoredMark]) {
        for mark in marks { rooms[mark.room]?.marks.stored(mark) }
    }

    /// How the next write treats session marks.
    func sessionWrites() -> SessionWrites {
        SessionWrites(idleSeconds: configuration.sessionIdle.seconds, limit: configuration.sessionLimit)
    }

    /// `room`'s state and history, for storage to replay only what comes after; the room counts changes from it.
    func snapshot(of room: Room) -> PendingSnapshot? {
        do {
            let snapshot = PendingSnapshot(
                room: room.name, version: room.store.version, state: try room.store.stateJSON(),
                history: room.store.history, stateVersion: configuration.app.evolution.version)
            room.changesSinceSnapshot = 0
            return snapshot
        } catch {
            logger.error("cannot snapshot a room", metadata: ["room": "\(room.name)", "error": "\(error)"])
            return nil
        }
    }

    /// With a room's first change (`version` 1): the initial state as a snapshot of version 0. A room is then always
    /// read from a stored state, in the state version its changes were written in, never replayed onto a newer app's
    /// initial state: a `State` changed without a migration fails for a young room as for an old one, in testing,
    /// not only once rooms have snapshots. (A room with no snapshot is taken as stored in version 1, as every room was
    /// before apps had state versions.)
    func initialSnapshot(of room: Room, storing version: Int) -> [PendingSnapshot] {
        let evolution = configuration.app.evolution
        guard version == 1,
            let state = try? configuration.app.makeStore(undoDepth: configuration.undoDepth).stateJSON()
        else { return [] }
        return [
            PendingSnapshot(
                room: room.name, version: 0, state: state, history: History(depth: configuration.undoDepth),
                stateVersion: evolution.version)
        ]
    }

    /// Takes `room` out of memory and sends its clients away with `notice`: they reconnect to what storage has.
    func drop(_ room: Room, telling notice: ServerMessage, reason: String) {
        rooms[room.name] = nil
        pipeline.forget(room)
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

extension SyncServer {
    /// Queues an answer behind every patch and answer its room still holds back, so order is kept.
    func reply(_ answer: RequestAnswer, to requester: any Requester) {
        if case .error(_, let code, _) = answer { metrics.error(code) }
        pipeline.reply(answer, to: requester, server: self)
    }
}
