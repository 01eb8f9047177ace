import CoreMetrics
import Foundation
import Logging
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Rooms come into memory when a client joins or an HTTP read asks for them, read from storage off the loop.
extension SyncServer {
    /// The room in memory, or read from storage (one read for everyone asking meanwhile); nil for a room no client
    /// ever joined, unless `creating` (a client joining makes it exist).
    func room(named name: String, creating: Bool) async -> Result<Room?, StorageError> {
        while true {
            if let room = rooms[name] { return .success(room) }
            if reads[name] != nil {
                // Resumed on the loop by the read's own caller; no hop through the shared task pool.
                let error = await withCheckedContinuation { reads[name, default: []].append($0) }
                if let error { return .failure(error) }
                // A read that found nothing does not create: a joining client reads again, creating.
                guard rooms[name] != nil || creating else { return .success(nil) }
                continue
            }
            reads[name] = []
            let error = await read(name, creating: creating)
            for waiter in reads.removeValue(forKey: name) ?? [] { waiter.resume(returning: error) }
            if let error { return .failure(error) }
            return .success(rooms[name])
        }
    }

    /// Reads a room into memory; the error when storage fails.
    private func read(_ name: String, creating: Bool) async -> StorageError? {
        switch await pipeline.read(room: name, creating: creating, server: self) {
        case .failure(let error):
            logger.error("cannot load a room", metadata: ["room": "\(name)", "error": "\(error)"])
            return error
        case .success(let image):
            guard rooms[name] == nil, image.exists || creating else { return nil }
            let room = install(image, as: name)
            pipeline.installed(room, server: self)
            return nil
        }
    }

    /// Joins a client once its room is in memory and up to date with storage; refuses it (1011) when the room
    /// cannot be read.
    func enter(_ connection: WebSocketConnection, room name: String, grant: AccessGrant) async {
        let session = connection.query["session"].flatMap(SessionName.init)?.value
        let read = await room(named: name, creating: true)
        guard case .success(let room?) = read, await pipeline.prepareJoin(of: room, session: session, server: self)
        else {
            guard connection.isOpen else { return }
            if case .failure(let error) = read {
                let notice = ServerMessage.error(id: nil, code: "unavailable", message: Self.loadFailure(name, error))
                connection.send(OutboundFrame(text: notice.serialized()))
            }
            connection.close(code: 1011, reason: "the room cannot be loaded")
            return
        }
        guard connection.isOpen else { return }
        // The room left memory meanwhile: it is read again.
        guard rooms[name] === room else { return await enter(connection, room: name, grant: grant) }
        guard !isDraining else { return connection.close(code: Self.goingAway, reason: Self.drainingNotice) }
        connection.resumeReceiving()
        join(connection, to: room, grant: grant)
    }

    /// What a client is told when its room cannot be read: why, without the storage's details (the log has them).
    static func loadFailure(_ room: String, _ error: StorageError) -> String {
        if case .unloadableRoom = error {
            return "room \(room) is stored in a shape this server's app cannot read (its log says why); it is kept as "
                + "stored and loads once the server is fixed: reconnect later"
        }
        return "room \(room) cannot be read from storage now: reconnect later"
    }

    /// Puts a room read from storage in memory (a new one when it was never stored), with its epoch and marks.
    func install(_ image: StoredRoomImage, as name: String) -> Room {
        let store = image.replay?.store ?? configuration.app.makeStore(undoDepth: configuration.undoDepth)
        if let damaged = image.replay?.damagedFrom {
            logger.warning(
                "the log of a room is damaged; it opens at the last good version",
                metadata: ["room": "\(name)", "damagedFrom": "\(damaged)", "version": "\(store.version)"])
        }
        let room = Room(
            name: name, store: store, stream: makeStream(), resumeWindow: configuration.resumeWindow,
            recent: image.recent.compactMap { Room.loggedPatch($0, parts: privateParts)?.patch }, parts: privateParts)
        room.changesSinceSnapshot = store.version - image.snapshotVersion
        // Past states within the window (a view resuming) are rebuilt as before the room left memory; not across a
        // migration, where the room's history starts over.
        if image.replay?.migratedFrom == nil {
            room.engine.timeline.restore(
                image.recent.map { ($0.version, try? $0.parsedRecord().inverse) }, through: store.version)
        }
        if let epoch = image.epoch {
            room.epoch = epoch
            room.epochStored = true
        }
        room.engine.marks = SessionMarks(image.marks)
        room.engine.marks.forgetIdle(now: Date().timeIntervalSince1970, idleSeconds: configuration.sessionIdle.seconds)
        rooms[name] = room
        metrics.rooms.increment()
        if let from = image.replay?.migratedFrom {
            logger.notice(
                "migrated a room to the app's state version; its undo history starts over",
                metadata: [
                    "room": "\(name)", "version": "\(store.version)", "fromStateVersion": "\(from)",
                    "stateVersion": "\(configuration.app.evolution.version)",
                ])
        } else if image.replay != nil {
            logger.info("loaded a room", metadata: ["room": "\(name)", "version": "\(store.version)"])
        }
        // Loaded for a read, it leaves again once idle; a client joining stops the clock.
        roomBecameIdle(room)
        return room
    }
}
