import CoreMetrics
import LockstepCore
import Logging
import LockstepTransport

/// Idle rooms leave memory: with a data directory, a room nobody has used for `roomIdle` is written out (a snapshot,
/// after every change before it) and dropped; its next join or `GET` loads it again, as after a restart. A
/// long-running server so holds the rooms in use, not every room it has ever seen.
extension SyncServer {
    /// Starts `room`'s idle clock: it has no client now. Rooms stay in memory with `--memory`.
    func roomBecameIdle(_ room: Room) {
        guard log != nil, room.sessions.isEmpty else { return }
        let since = ContinuousClock.now
        room.idleSince = since
        let name = room.name
        Task {
            try? await Task.sleep(for: configuration.roomIdle)
            self.evictIfIdle(name, idleSince: since)
        }
    }

    /// Writes the room out and drops it, if it has stayed idle since `since` and nothing of it is still at work.
    private func evictIfIdle(_ name: String, idleSince since: ContinuousClock.Instant) {
        guard !isStopped, let room = rooms[name], room.idleSince == since, room.isIdle else { return }
        room.idleSince = nil
        // On shared storage everything the room did is committed: it may go at once.
        if shared != nil { return evict(room, at: room.store.version) }
        if room.changesSinceSnapshot > 0 { queueSnapshot(of: room) }
        // Released once everything queued before it is in the log, the snapshot included.
        durability.pending.append(.evict(room, version: room.store.version))
        scheduleWrite(of: room)
    }

    /// The room's snapshot is stored: it leaves memory unless it was used again meanwhile.
    func evict(_ room: Room, at version: Int) {
        guard rooms[room.name] === room, room.isIdle, room.store.version == version else {
            if rooms[room.name] === room { roomBecameIdle(room) }
            return
        }
        rooms[room.name] = nil
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
