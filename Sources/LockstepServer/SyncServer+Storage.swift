import CoreMetrics
import Logging
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// What the pipelines ask of the server once storage answered: release what waited, drop what cannot be trusted.
extension SyncServer {
    /// Sends patches, replies and evictions that waited for a write, in order.
    func release(_ items: [RoomRelease]) {
        for item in items {
            switch item {
            case .patch(let room, let patch): broadcast(patch, in: room)
            case .reply(let requester, let answer): requester.answer(answer)
            case .evict(let room, let version): evict(room, at: version)
            }
        }
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
