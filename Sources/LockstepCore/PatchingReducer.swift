/// A reducer that says what each action changed, so the store neither compares nor diffs states.
///
/// The store's default finds a change by keeping the state as it was, comparing it with the state after
/// `reduce`, and diffing the two: cheap for small states, but proportional to what the differ has to scan
/// (a large array is scanned with `==` on every action). A reducer that knows what it changed can return
/// the operations itself: the store then mutates its state in place and records exactly those patches.
///
/// ```swift
/// struct Counter: PatchingReducer {
///     // State, Action and initialState as for any Reducer.
///     func patch(_ state: inout State, with action: Action) throws(Rejection) -> Reduction<Action> {
///         let old = state.count
///         state.count += 1
///         let path = JSONPointer(tokens: ["count"])
///         return Reduction(
///             forward: JSONPatch([.replace(path: path, value: .int(state.count))]),
///             inverse: JSONPatch([.replace(path: path, value: .int(old))]))
///     }
/// }
/// ```
///
/// The patches must agree with the state's encoding: `forward` applied to the encoding of the state before
/// gives the encoding of the state after, and `inverse` turns it back. (The `json` app's reducer gets both
/// from ``/LockstepJSON/JSONPatch/applyRecording(to:)``.) Return empty patches when nothing changed: the room then
/// keeps its version.
public protocol PatchingReducer: Reducer {
    /// Applies `action` to `state` in place and returns the change it made as patches.
    ///
    /// Throw a ``Rejection`` to refuse the action; unlike `reduce`, the store keeps no copy to fall back to,
    /// so leave `state` as it was when you throw (check first, then change).
    func patch(_ state: inout State, with action: Action) throws(Rejection) -> Reduction<Action>

    /// Like ``patch(_:with:)``, knowing who sent the action, when, and with a random source (see ``ReducerContext``);
    /// the default ignores the context.
    func patch(
        _ state: inout State, with action: Action, context: ReducerContext
    ) throws(Rejection) -> Reduction<Action>
}

extension PatchingReducer {
    public func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
        try patch(&state, with: action).effect
    }

    public func patch(
        _ state: inout State, with action: Action, context: ReducerContext
    ) throws(Rejection) -> Reduction<Action> {
        try patch(&state, with: action)
    }

    /// Returns what ``patch(_:with:context:)`` returns, its ``Rejection`` as the store's `rejected` error.
    public func reduceRecordingPatches(
        into state: inout State, action: Action, context: ReducerContext
    ) throws(StoreError) -> Reduction<Action> {
        do {
            return try patch(&state, with: action, context: context)
        } catch {
            throw .rejected(error.message)
        }
    }
}
