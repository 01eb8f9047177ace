import CoreMetrics
import LockstepCore
import LockstepStorage
import LockstepTransport
import Logging

/// The server as a ``CommitPipeline`` sees it: its settings, the rooms in memory, and ``handle(_:)``, which takes what
/// the pipeline reports (``PipelineEvent``). A pipeline sees the server only through this, isolated to it (the
/// transport's loop).
protocol RoomHost: Actor {
    nonisolated var configuration: ServerConfiguration { get }
    nonisolated var logger: Logger { get }
    nonisolated var clock: ServerClock { get }
    /// The server is shutting down: pumps and polls end.
    nonisolated var isStopped: Bool { get }
    /// The rooms in memory, by name.
    var rooms: [String: Room] { get }

    /// Carries out what a pipeline reports, at once.
    func handle(_ event: PipelineEvent)
}

extension SyncServer: RoomHost {
    func handle(_ event: PipelineEvent) {
        switch event {
        case .turn(let input, let room): apply(input, in: room)
        case .released(let items): release(items)
        case .committed(let patch, let room): broadcast(patch, in: room)
        case .sessionLost(let session, let notice, let reason): sendAway(session, telling: notice, reason: reason)
        case .roomLost(let room, let notice, let reason):
            // A room read again since holds what is stored.
            guard rooms[room.name] === room else { return }
            drop(room, telling: notice, reason: reason)
        case .timersUnsure(let room): rereadTimers(of: room)
        case .evictable(let room, let version): evict(room, at: version)
        case .idle(let room): roomBecameIdle(room)
        case .peersChanged(let room): schedulePresence(in: room)
        case .peerStatesChanged(let clients, let room): presenceStatesChanged(of: clients, in: room)
        }
    }

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
