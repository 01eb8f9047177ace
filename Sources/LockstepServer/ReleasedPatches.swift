import DequeModule
#if LOCKSTEP_MUTANTS
import LockstepCore
#endif

/// The patches a room has released (sent to its clients), as many as its resume window holds: what a client resuming
/// with `since=` missed, and the room's `history`. No I/O: ``Room`` keeps one, and so do the cluster simulation's
/// rooms.
struct ReleasedPatches {
    /// The newest version whose patch went out; a room's store may be ahead while changes are being written.
    private(set) var version: Int
    /// The last patches released, oldest first: at most ``window``.
    private(set) var recent: Deque<Room.LoggedPatch>
    let window: Int

    /// At `version`, with `recent`, the last patches before it (those of a room read from storage).
    init(version: Int, window: Int, recent: [Room.LoggedPatch] = []) {
        self.version = version
        self.window = window
        self.recent = Deque(recent.suffix(window))
    }

    /// A patch went out: the newest, kept without its views' frames.
    mutating func release(_ patch: Room.LoggedPatch) {
        var logged = patch
        logged.views = [:]
        recent.append(logged)
        if recent.count > window { recent.removeFirst() }
        version = patch.version
    }

    /// Whether a snapshot of `version` (the room's store's) waits for that version's release: its changes are still
    /// being stored, and a crash before they are would take back what it shows.
    func holdsSnapshot(of version: Int) -> Bool {
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.snapshotBeforeStored) { return false }
        #endif
        return version > self.version
    }

    /// The patches after `version`, if the window still has all of them.
    func patches(after version: Int) -> [Room.LoggedPatch]? {
        guard version >= 0, version <= self.version else { return nil }
        if version == self.version { return [] }
        guard let first = recent.first, first.version <= version + 1 else { return nil }
        let start = version + 1 - first.version
        return Array(recent[start..<recent.count])
    }
}
