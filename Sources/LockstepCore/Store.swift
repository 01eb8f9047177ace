public import LockstepJSON

/// A room's authoritative store: a reducer, its current state, a version and the undo history.
///
/// Pure and synchronous: the same requests in the same order give the same versions, patches and
/// states. The server runs one per room on its loop thread and broadcasts every ``Change``.
public struct Store<R: Reducer>: Sendable {
    /// The outcome of one action.
    public struct Result: Sendable {
        /// The new version, or nil when the action left the state as it was.
        public let change: Change?
        /// Follow-up work the reducer asked for.
        public let effect: Effect<R.Action>
    }

    public let reducer: R
    public internal(set) var state: R.State
    public internal(set) var version: Int
    public internal(set) var history: History

    /// A store at `version` with `state` (a new room: the reducer's initial state at version 0).
    public init(reducer: R, state: R.State? = nil, version: Int = 0, history: History = History(depth: 1000)) {
        self.reducer = reducer
        self.state = state ?? reducer.initialState
        self.version = version
        self.history = history
    }

    /// Runs `action` through the reducer; a change empties the redo side, a no-op leaves it.
    public mutating func send(_ action: R.Action) throws(StoreError) -> Result {
        var next = state
        let effect: Effect<R.Action>
        do {
            effect = try reducer.reduce(into: &next, action: action)
        } catch {
            throw .rejected(error.message)
        }
        guard next != state else { return Result(change: nil, effect: effect) }

        var differ = StateDiffer()
        do {
            try differ.diffChanged(state, next, at: .root)
        } catch {
            throw .brokenState("\(error)")
        }
        version += 1
        let forward = JSONPatch(differ.forward)
        let inverse = JSONPatch(differ.inverse)
        history.record(HistoryEntry(version: version, forward: forward, inverse: inverse))
        state = next
        return Result(change: Change(version: version, patch: forward, inverse: inverse, kind: .action), effect: effect)
    }

    /// Reverts the most recent change not yet undone, as a new version.
    public mutating func undo() throws(StoreError) -> Change {
        guard let entry = history.popUndo() else { throw .nothingToUndo }
        do {
            try apply(entry.inverse)
        } catch {
            history.pushUndo(entry)
            throw error
        }
        history.pushRedo(entry)
        version += 1
        return Change(version: version, patch: entry.inverse, inverse: entry.forward, kind: .undo(of: entry.version))
    }

    /// Re-applies the most recently undone change, as a new version.
    public mutating func redo() throws(StoreError) -> Change {
        guard let entry = history.popRedo() else { throw .nothingToRedo }
        do {
            try apply(entry.forward)
        } catch {
            history.pushRedo(entry)
            throw error
        }
        history.pushUndo(entry)
        version += 1
        return Change(version: version, patch: entry.forward, inverse: entry.inverse, kind: .redo(of: entry.version))
    }

    /// The state as the JSON clients see.
    public func stateJSON() throws(StoreError) -> JSON {
        do {
            return try JSON(encoding: state)
        } catch {
            throw .brokenState("\(error)")
        }
    }

    private mutating func apply(_ patch: JSONPatch) throws(StoreError) {
        var document = try stateJSON()
        do {
            _ = try patch.apply(to: &document)
            state = try document.decode(R.State.self)
        } catch {
            throw .brokenState("a stored patch no longer applies: \(error)")
        }
    }
}
