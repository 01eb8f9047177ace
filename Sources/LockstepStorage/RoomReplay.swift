public import LockstepCore
import LockstepJSON

/// Rebuilds a room from its latest snapshot and the changes logged after it.
///
/// Each change's patch is applied to the state and its effect on the undo history repeated, so
/// versions continue and undo works across a restart. A record that does not parse, does not
/// follow its predecessor or does not apply ends the replay: the room opens at the last good
/// version and `damagedFrom` says where the log must be cut.
public struct RoomReplay: Sendable {
    /// The rebuilt store.
    public let store: any RoomStore
    /// The first version that could not be replayed, if any.
    public let damagedFrom: Int?
    /// The state version the room was stored in, when it was older than the app's and the store holds it migrated:
    /// the migrated state should be written back (``RoomStorage/storeMigration(_:epoch:)``) before anything else.
    public let migratedFrom: Int?

    /// Replays `stored`; throws ``StorageError/unloadableRoom(room:version:reason:)`` when its snapshot is damaged or
    /// its state, migrated to the app's state version, does not decode.
    ///
    /// The log's patches were written against the shape of the snapshot before them, so they are replayed first, in
    /// that shape, and the migrations run on the resulting state. The undo history does not survive a migration.
    public init(_ stored: StoredRoom, app: App, undoDepth: Int) throws(StorageError) {
        let room = stored.snapshot?.room ?? stored.changes.first?.room ?? ""
        let stateVersion = stored.snapshot?.stateVersion ?? 1
        var state: JSON
        var history: History
        var version: Int
        if let snapshot = stored.snapshot {
            do {
                state = try JSON(parsing: snapshot.state)
                history = try HistoryCoding.decode(snapshot.history, depth: undoDepth)
            } catch {
                throw .unloadableRoom(
                    room: room, version: snapshot.version,
                    reason: "its snapshot of version \(snapshot.version) is damaged: \(error)")
            }
            version = snapshot.version
        } else {
            state = try Self.initialState(of: app, undoDepth: undoDepth, room: room)
            history = History(depth: undoDepth)
            version = 0
        }

        let damagedFrom = Self.replay(stored.changes, state: &state, history: &history, version: &version)
        self.damagedFrom = damagedFrom
        let migrating = stateVersion != app.evolution.version
        if migrating, stored.snapshot == nil, let damagedFrom {
            // Changes of a room stored before state versions, replayed onto today's initial state: a patch that does
            // not apply may be the older shape's, not damage, so nothing is cut.
            throw .unloadableRoom(
                room: room, version: version,
                reason: "its change of version \(damagedFrom), stored in state version \(stateVersion), does not apply "
                    + "to the app's initial state of version \(app.evolution.version)")
        }
        do {
            store = try app.loadStore(state: state, stateVersion: stateVersion, version: version, history: history)
        } catch {
            throw .unloadableRoom(room: room, version: version, reason: error.description)
        }
        migratedFrom = migrating ? stateVersion : nil
    }

    private static func initialState(of app: App, undoDepth: Int, room: String) throws(StorageError) -> JSON {
        do {
            return try app.makeStore(undoDepth: undoDepth).stateJSON()
        } catch {
            throw .unloadableRoom(room: room, version: 0, reason: error.message)
        }
    }

    /// Continues a room held in memory with changes another server committed after its version, oldest first; a
    /// change that does not follow or apply ends it, as in a load. Changes the store already has are skipped.
    public init(continuing store: any RoomStore, with changes: [StoredChange], app: App) throws(StoreError) {
        var state = try store.stateJSON()
        var history = store.history
        var version = store.version
        let damagedFrom = Self.replay(
            changes.drop { $0.version <= version }, state: &state, history: &history, version: &version)
        self.store = try app.restoreStore(state: state, version: version, history: history)
        self.damagedFrom = damagedFrom
        migratedFrom = nil
    }

    /// Applies each change's patch and repeats its effect on the history; returns the first version that failed.
    private static func replay(
        _ changes: some Sequence<StoredChange>, state: inout JSON, history: inout History, version: inout Int
    ) -> Int? {
        for change in changes {
            do {
                guard change.version == version + 1 else { throw StoreError.brokenState("version gap") }
                guard case .patch(_, let ops, let cause, _, _) = try ServerMessage(json: JSON(parsing: change.message))
                else {
                    throw StoreError.brokenState("not a patch")
                }
                let record = try change.parsedRecord()
                var next = state
                _ = try ops.apply(to: &next)
                try history.replay(
                    Self.kind(of: cause, record: record), version: change.version, patch: ops,
                    inverse: record.inverse, author: record.author, compensation: record.compensation,
                    time: cause.at ?? 0)
                state = next
                version = change.version
            } catch {
                return change.version
            }
        }
        return nil
    }

    /// The change's kind; for undo mine and redo mine, with the change it took back, as its record says.
    private static func kind(of cause: Cause, record: ChangeRecord) throws(StoreError) -> Change.Kind {
        switch cause.kind {
        case .action, .effect, .timer, .join, .leave:
            return .action
        case .undo, .redo:
            guard let original = cause.of else { throw .brokenState("an undo or redo without \"of\"") }
            guard cause.mine else { return cause.kind == .undo ? .undo(of: original) : .redo(of: original) }
            guard let taking = record.taking else {
                throw .brokenState("an undo mine or redo mine of version \(original) without the change it took back")
            }
            return cause.kind == .undo
                ? .undoMine(of: original, taking: taking) : .redoMine(of: original, taking: taking)
        case .revert:
            guard let target = cause.to else { throw .brokenState("a revert without \"to\"") }
            return .revert(to: target)
        }
    }
}
