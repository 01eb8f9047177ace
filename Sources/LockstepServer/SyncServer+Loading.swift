import CoreMetrics
import Logging
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

extension SyncServer {
    enum LoadResult {
        case loaded(Room)
        case absent
        case failed
    }

    /// A room that is in memory or in the log; nil for one never used.
    func storedRoom(named name: String) -> Room? {
        if case .loaded(let room) = loadRoom(named: name) { return room }
        return nil
    }

    /// The room in memory, or rebuilt from the log: latest snapshot, then the changes after it.
    ///
    /// Runs on the loop thread, once per room per process: a snapshot every
    /// `snapshotInterval` changes keeps the replay short.
    func loadRoom(named name: String) -> LoadResult {
        if let room = rooms[name] { return .loaded(room) }
        guard let log else { return .absent }
        do {
            guard let stored = try log.load(room: name) else { return .absent }
            let replay = try RoomReplay(stored, app: configuration.app, undoDepth: configuration.undoDepth)
            if let damaged = replay.damagedFrom {
                logger.warning(
                    "the log of a room is damaged; it opens at the last good version",
                    metadata: [
                        "room": "\(name)", "damagedFrom": "\(damaged)", "version": "\(replay.store.version)",
                    ])
                try log.truncate(room: name, from: damaged)
            }
            let version = replay.store.version
            let recent = try log.changes(room: name, after: max(0, version - configuration.resumeWindow))
                .prefix { $0.version <= version }
                .compactMap(Self.loggedPatch)
            let room = Room(
                name: name, store: replay.store, stream: makeStream(), resumeWindow: configuration.resumeWindow,
                recent: recent
            )
            room.changesSinceSnapshot = version - (stored.snapshot?.version ?? 0)
            try restoreSessions(of: room, stored: true)
            rooms[name] = room
            metrics.rooms.increment()
            logger.info("loaded a room", metadata: ["room": "\(name)", "version": "\(version)"])
            // Loaded for a read, it leaves again once idle; a client joining stops the clock.
            roomBecameIdle(room)
            return .loaded(room)
        } catch {
            logger.error("cannot load a room", metadata: ["room": "\(name)", "error": "\(error)"])
            return .failed
        }
    }

    private static func loggedPatch(_ change: StoredChange) -> Room.LoggedPatch? {
        guard let json = try? JSON(parsing: change.message),
            case .patch(let version, _, let cause, _, _)? = try? ServerMessage(json: json)
        else {
            return nil
        }
        return Room.LoggedPatch(version: version, cause: cause, frame: OutboundFrame(text: change.message))
    }
}
