import LockstepCore
import LockstepStorage

/// What `lockstep check` found for one stored room, loaded as a server loads it (``RoomReplay``: its latest snapshot,
/// the changes after it replayed, the app's migrations run) with nothing written back.
struct CheckedRoom: Sendable {
    /// The room's name.
    let room: String
    /// The version the room loads at, or the one it cannot be loaded at.
    let version: Int
    /// Why the room cannot be loaded; nil when it loads.
    let failure: String?
    /// The older state version a server would migrate the room from when it loads it.
    let migratedFrom: Int?
    /// The first version of a damaged log tail, which a server cuts when it loads the room.
    let damagedFrom: Int?
    /// The room has changes but no stored state: a server replays them onto the app's initial state of today, so a
    /// `State` changed without a migration cannot show in it.
    let hasNoStoredState: Bool

    /// Loads `stored`, the stored log of `room`, with `app`.
    init(room: String, stored: StoredRoom, app: App, undoDepth: Int) {
        self.room = room
        hasNoStoredState = stored.snapshot == nil
        do throws(StorageError) {
            let replay = try RoomReplay(stored, app: app, undoDepth: undoDepth)
            version = replay.store.version
            migratedFrom = replay.migratedFrom
            damagedFrom = replay.damagedFrom
            // A server writes a migrated room back at once: its state must encode.
            do throws(StoreError) {
                if replay.migratedFrom != nil { _ = try replay.store.stateJSON() }
                failure = nil
            } catch {
                failure = "its migrated state does not encode: \(error.message)"
            }
        } catch {
            if case .unloadableRoom(_, let version, let reason) = error {
                self.version = version
                failure = reason
            } else {
                version = stored.changes.last?.version ?? stored.snapshot?.version ?? 0
                failure = error.description
            }
            migratedFrom = nil
            damagedFrom = nil
        }
    }

    /// The line `lockstep check` prints for this room; nil for a room that loads as stored.
    var line: String? {
        if let failure { return "room \(room) (version \(version)) cannot be loaded: \(failure)" }
        if let damagedFrom {
            return "room \(room): its log is damaged from version \(damagedFrom); a server loads it at version "
                + "\(version) and cuts the rest"
        }
        return nil
    }
}
