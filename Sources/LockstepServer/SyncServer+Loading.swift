import CoreMetrics
import Foundation
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
            let image = try StoredRoomImage.read(room: name, from: log, configuration: configuration)
            guard image.replay != nil else { return .absent }
            return .loaded(install(image, as: name))
        } catch {
            logger.error("cannot load a room", metadata: ["room": "\(name)", "error": "\(error)"])
            return .failed
        }
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
            recent: image.recent.compactMap(Self.loggedPatch)
        )
        room.changesSinceSnapshot = store.version - image.snapshotVersion
        if let epoch = image.epoch {
            room.epoch = epoch
            room.epochStored = true
        } else if image.replay != nil {
            // A log written before epochs existed: the room's new one is stored with its next write.
            storeEpoch(of: room)
            scheduleWrite(of: room)
        }
        room.marks = SessionMarks(image.marks)
        room.marks.forgetIdle(now: Date().timeIntervalSince1970, idleSeconds: configuration.sessionIdle.seconds)
        rooms[name] = room
        metrics.rooms.increment()
        if image.replay != nil {
            logger.info("loaded a room", metadata: ["room": "\(name)", "version": "\(store.version)"])
        }
        // Loaded for a read, it leaves again once idle; a client joining stops the clock.
        roomBecameIdle(room)
        return room
    }

    static func loggedPatch(_ change: StoredChange) -> Room.LoggedPatch? {
        guard let json = try? JSON(parsing: change.message),
            case .patch(let version, _, let cause, _, _)? = try? ServerMessage(json: json)
        else {
            return nil
        }
        return Room.LoggedPatch(version: version, cause: cause, frame: OutboundFrame(text: change.message))
    }
}
