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
    ///
    /// A room taking HTTP requests with no client becomes idle after each: its one wait, armed at the first, finds
    /// the later start when it ends and waits out the rest, rather than a wait per request.
    func roomBecameIdle(_ room: Room) {
        guard pipeline.evictsIdleRooms else { return forgetIfUnused(room) }
        guard room.sessions.isEmpty, room.followers.isEmpty else { return }
        let now = clock.now
        room.idleSince = now
        guard !room.awaitsIdleDeadline else { return }
        waitForIdleDeadline(of: room, until: now + configuration.roomIdle)
    }

    private func waitForIdleDeadline(of room: Room, until deadline: Duration) {
        room.awaitsIdleDeadline = true
        Task { [weak room] in
            try? await clock.sleep(until: deadline)
            guard let room else { return }
            self.idleDeadlinePassed(room)
        }
    }

    /// Writes the room out and drops it if it stayed idle for `roomIdle` and nothing of it is still at work; waits
    /// out the rest when it became idle again since the wait began.
    private func idleDeadlinePassed(_ room: Room) {
        room.awaitsIdleDeadline = false
        guard !isStopped, rooms[room.name] === room, let since = room.idleSince else { return }
        let deadline = since + configuration.roomIdle
        guard deadline <= clock.now else { return waitForIdleDeadline(of: room, until: deadline) }
        guard isIdle(room) else { return }
        room.idleSince = nil
        pipeline.evict(room, server: self)
    }

    /// With `--memory`, drops a room made only for requests that were all refused, once none is left: names nobody
    /// uses must not fill memory, and nothing else would take them out. (Stored rooms leave once idle.)
    private func forgetIfUnused(_ room: Room) {
        guard room.isProvisional, rooms[room.name] === room, room.engine.store.version == 0, isIdle(room) else {
            return
        }
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
        guard rooms[room.name] === room, isIdle(room), room.engine.store.version == version else {
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
