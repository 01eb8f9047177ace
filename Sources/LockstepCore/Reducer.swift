public import LockstepJSON

/// The only way a room's state changes: a pure function from (state, action) to the next state.
///
/// A room runs one reducer; every client's action goes through it in one total order, and the
/// server turns each change into a JSON Patch. Keep `reduce` deterministic and free of I/O: put
/// slow or outside work in the returned ``Effect``.
///
/// ```swift
/// struct Counter: Reducer {
///     struct State: Codable, Equatable, Sendable { var count = 0 }
///     enum Action: Codable, Sendable { case increment }
///     var initialState: State { State() }
///     func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
///         state.count += 1
///         return .none
///     }
/// }
/// ```
///
/// `State` must encode the same JSON whenever it is `==`, and decode back to an equal value:
/// the server diffs states through their encoding and rebuilds them from patches on undo.
///
/// The store finds what an action changed by comparing and diffing the states before and after (the
/// typed differ, cheap for small states). A reducer that knows what it changed adopts
/// ``PatchingReducer`` instead and returns the patches itself; see docs/performance.md for the costs.
public protocol Reducer<State, Action>: Sendable {
    /// What a room holds; encoded as the JSON clients see.
    associatedtype State: Codable & Equatable & Sendable
    /// What clients send; decoded from the `action` field of their message.
    associatedtype Action: Codable & Sendable

    /// The state of a room that no one has used yet.
    var initialState: State { get }

    /// Applies `action` to `state`.
    ///
    /// Throw a ``Rejection`` to refuse the action under a domain rule: the state is then left as
    /// it was (whatever `reduce` did to it), and the sender gets the `rejected` error.
    func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action>

    /// Applies `action` to `state`, knowing who sent it, when, and with a random source: what the store calls.
    ///
    /// The default ignores the context and calls ``reduce(into:action:)``. A reducer that needs the context adopts
    /// ``ContextualReducer`` and implements this instead.
    func reduce(into state: inout State, action: Action, context: ReducerContext) throws(Rejection) -> Effect<Action>

    /// Applies `action` to `state` and returns the change as patches; the store calls it for every action.
    ///
    /// The default (the typed differ) runs ``reduce(into:action:context:)`` on a copy of the state, then compares
    /// and diffs the two. Adopt ``PatchingReducer`` rather than implementing this yourself.
    func reduceRecordingPatches(
        into state: inout State, action: Action, context: ReducerContext
    ) throws(StoreError) -> Reduction<Action>

    /// The compensation of `action` on `state` (before it runs), sent in `context`, as JSON, kept with the change for
    /// undo mine; nil for the guarded inverse patch. Adopt ``CompensatingReducer`` rather than implementing this
    /// yourself.
    func encodedCompensation(for action: Action, in state: State, context: ReducerContext) -> JSON?

    /// Runs a kept compensation on `state` and returns the change as patches, with the compensation that takes it
    /// back in turn (for redo mine). Adopt ``CompensatingReducer`` rather than implementing this yourself.
    func takeBack(
        _ compensation: JSON, in state: inout State
    ) throws(StoreError) -> (reduction: Reduction<Action>, compensation: JSON?)

    /// Applies a stored patch to `state`: what undo and redo do.
    ///
    /// The default encodes the whole state, applies the patch to the JSON and decodes the result; when
    /// `State` is ``/LockstepJSON/JSON`` it applies the patch in place, at the cost of the patch alone.
    func apply(_ patch: JSONPatch, to state: inout State) throws(StoreError)
}
