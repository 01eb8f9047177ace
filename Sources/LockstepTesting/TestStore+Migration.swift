public import LockstepCore
public import LockstepJSON

/// Starting a test from a state an older version of the app stored, so a migration is tested where it runs.
extension TestStore {
    /// A harness for `reducer` starting from `stored`, a state an older version of `app` stored under state version
    /// `stateVersion`: `app`'s migrations bring it to the app's current version and it is decoded as the app's
    /// `State`, both exactly as a server loading that room does. It starts at version 0 with no undo history, as a
    /// migrated room's history starts over.
    ///
    /// ```swift
    /// let store = try TestStore(Board(), app: kanban, migrating: ["cards": [["text": "milk"]]], fromStateVersion: 1)
    /// #expect(store.state.cards == [Card(title: "milk", archived: false)])
    /// store.send(.archive(0)) { $0.cards[0].archived = true }
    /// ```
    ///
    /// - Parameters:
    ///   - reducer: The reducer under test; `app` must run it (`App(_:summary:reducer:...)` with the same type).
    ///   - app: The app whose state version and migrations apply, as the server is given it.
    ///   - stored: The stored state, as JSON: a room's `state` from an older server (`GET /rooms/ROOM`), or written
    ///     by hand.
    ///   - stateVersion: The state version `stored` was written in.
    ///   - undoDepth: Changes the store can undo.
    ///   - epoch: The room's epoch, which seeds each step's random source.
    ///   - now: The time of the first step, in milliseconds since the Unix epoch.
    ///   - timeStep: How far the clock moves on after each step.
    /// - Throws: The ``/LockstepCore/MigrationError`` a server loading the room would fail with: a migration threw,
    ///   `stored` is of a newer state version than the app's, or the migrated state does not decode (a field the
    ///   migrations do not bring into shape).
    public convenience init(
        _ reducer: R, app: App, migrating stored: JSON, fromStateVersion stateVersion: Int, undoDepth: Int = 1000,
        epoch: String = "test", now: Int = 1_767_225_600_000, timeStep: Duration = .seconds(1)
    ) throws(MigrationError) {
        let loaded = try app.loadStore(
            state: stored, stateVersion: stateVersion, version: 0, history: History(depth: undoDepth))
        let state: R.State
        if let typed = loaded as? Store<R> {
            state = typed.state
        } else {
            // The app runs another reducer type: its state, as JSON, read as this reducer's.
            do {
                state = try loaded.stateJSON().decode(R.State.self)
            } catch {
                throw .undecodable(
                    stateVersion: app.evolution.version,
                    reason: "the app runs another reducer than \(R.self), whose State this is not: \(error)")
            }
        }
        self.init(reducer, state: state, undoDepth: undoDepth, epoch: epoch, now: now, timeStep: timeStep)
    }
}
