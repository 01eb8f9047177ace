import CoreMetrics
import LockstepCore
import Logging
import LockstepTransport

/// Idle rooms leave memory: with a data directory, a room nobody has used for `roomIdle` is written out (a snapshot,
/// after every change before it) and dropped; its next join or `GET` loads it again, as after a restart. A
/// long-running server so holds the rooms in use, not every room it has ever seen.
extension SyncServer {
    /// Starts `room`'s idle clock: it has no client now. Rooms stay in memory with `--memory`, except one nobody has
    /// used: that leaves at once.
    func roomBecameIdle(_ room: Room) {
        guard pipeline.evictsIdleRooms else { return forgetIfUnused(room) }
        guard room.sessions.isEmpty, room.followers.isEmpty else { return }
        let since = clock.now
        room.idleSince = since
        let name = room.name
        let deadline = since + configuration.roomIdle
        Task {
            try? await clock.sleep(until: deadline)
            self.evictIfIdle(name, idleSince: since)
        }
    }

    /// Writes the room out and drops it, if it has stayed idle since `since` and nothing of it is still at work.
    private func evictIfIdle(_ name: String, idleSince since: Duration) {
        guard !isStopped, let room = rooms[name], room.idleSince == since, isIdle(room) else { return }
        room.idleSince = nil
        pipeline.evict(room, server: self)
    }

    /// With `--memory`, drops a room made only for requests that were all refused, once none is left: names nobody
    /// uses must not fill memory, and nothing else would take them out. (Stored rooms leave once idle.)
    private func forgetIfUnused(_ room: Room) {
        guard room.isProvisional, rooms[room.name] === room, room.store.version == 0, isIdle(room) else { return }
        rooms[room.name] = nil
        pipeline.forget(room)
        metrics.rooms.decrement()
    }

    /// Nobody and nothing uses the room, and nothing of it waits to be stored.
    func isIdle(_ room: Room) -> Bool {
        room.isIdle && pipeline.isIdle(room)
    }

    /// The room's snapshot is stored: it leaves memory unless it was used again meanwhile.
    func evict(_ room: Room, at version: Int) {
        guard rooms[room.name] === room, isIdle(room), room.store.version == version else {
            if rooms[room.name] === room { roomBecameIdle(room) }
            return
        }
        rooms[room.name] = nil
        pipeline.forget(room)
        metrics.rooms.decrement()
        metrics.evictions.increment()
        logger.info("evicted an idle room", metadata: ["room": "\(room.name)", "version": "\(version)"])
        guard !trimScheduled else { return }
        // Once for all the rooms this write let go: the allocator keeps freed pages unless asked to return them.
        trimScheduled = true
        Task {
            trimScheduled = false
            ResourceLimits.returnFreeMemory()
        }
    }
}
