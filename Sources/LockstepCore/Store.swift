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

    /// The app's rules: what each action does to the state.
    public let reducer: R
    /// The room's current state, typed.
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
    ///
    /// The reducer says what changed (``Reducer/reduceRecordingPatches(into:action:context:)``): a ``PatchingReducer``
    /// changes the state in place and returns its own patches, any other reducer goes through the typed differ.
    /// The change is recorded as the context's sender's, with the action's compensation for undo mine.
    public mutating func send(
        _ action: R.Action, context: ReducerContext = ReducerContext()
    ) throws(StoreError) -> Result {
        let reducer = self.reducer
        let compensation = reducer.encodedCompensation(for: action, in: state, context: context)
        let reduction = try reducer.reduceRecordingPatches(into: &state, action: action, context: context)
        guard !reduction.forward.isEmpty else { return Result(change: nil, effect: reduction.effect) }
        if let refusal = context.refusal?(reduction.forward, reduction.inverse) {
            try apply(reduction.inverse)
            throw .forbidden(refusal)
        }
        version += 1
        history.record(HistoryEntry(version: version, forward: reduction.forward, inverse: reduction.inverse))
        let change = Change(version: version, patch: reduction.forward, inverse: reduction.inverse, kind: .action)
        history.note(change, author: context.sender?.author, compensation: compensation, time: context.time)
        return Result(change: change, effect: reduction.effect)
    }

    /// Reverts the most recent change not yet undone, as a new version.
    public mutating func undo(context: ReducerContext = ReducerContext()) throws(StoreError) -> Change {
        guard let entry = history.popUndo() else { throw .nothingToUndo }
        do {
            try apply(entry.inverse)
        } catch {
            history.pushUndo(entry)
            throw error
        }
        history.pushRedo(entry)
        version += 1
        let change = Change(
            version: version, patch: entry.inverse, inverse: entry.forward, kind: .undo(of: entry.version))
        history.note(change, author: context.sender?.author, compensation: nil, time: context.time)
        return change
    }

    /// Re-applies the most recently undone change, as a new version.
    public mutating func redo(context: ReducerContext = ReducerContext()) throws(StoreError) -> Change {
        guard let entry = history.popRedo() else { throw .nothingToRedo }
        do {
            try apply(entry.forward)
        } catch {
            history.pushRedo(entry)
            throw error
        }
        history.pushUndo(entry)
        version += 1
        let change = Change(
            version: version, patch: entry.forward, inverse: entry.inverse, kind: .redo(of: entry.version))
        history.note(change, author: context.sender?.author, compensation: nil, time: context.time)
        return change
    }

    /// The state as the JSON clients see.
    public func stateJSON() throws(StoreError) -> JSON {
        do {
            return try JSON(encoding: state)
        } catch {
            throw .brokenState("\(error)")
        }
    }

    /// Applies a stored patch to the state, through ``Reducer/apply(_:to:)``: in place when the state is JSON.
    mutating func apply(_ patch: JSONPatch) throws(StoreError) {
        let reducer = self.reducer
        try reducer.apply(patch, to: &state)
    }
}
