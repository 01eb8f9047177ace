public import LockstepJSON

/// A reducer with a step in front: validate, authorise or enrich each action, seeing the state, the sender and the
/// time, before the wrapped reducer runs it. What ReSwift calls middleware, composed as a plain reducer, so a
/// `TestStore` (LockstepTesting) tests it like any other and several compose by wrapping.
///
/// ```swift
/// // Only a card's author may remove it.
/// let board = Board().middleware { state, action, context throws(Rejection) in
///     if case .remove(let id) = action, let card = state.cards[id], card.author != context.sender?.subject {
///         throw Rejection("only \(card.author ?? "its author") may remove card \(id)")
///     }
///     return action
/// }
/// ```
///
/// The wrapped reducer keeps its own way of recording patches (a ``PatchingReducer`` stays as fast) and its
/// compensations.
public struct Middleware<Base: Reducer>: ContextualReducer {
    public typealias State = Base.State
    public typealias Action = Base.Action

    /// Returns the action to run (the one given, or an enriched one); throw ``Rejection`` to refuse it.
    public typealias Step = @Sendable (State, Action, ReducerContext) throws(Rejection) -> Action

    /// The wrapped reducer, which runs each action the step passes.
    public let base: Base
    private let step: Step

    /// `base` with `step` in front of it; ``Reducer/middleware(_:)`` makes the same.
    public init(_ base: Base, step: @escaping Step) {
        self.base = base
        self.step = step
    }

    public var initialState: State { base.initialState }

    public func reduce(
        into state: inout State, action: Action, context: ReducerContext
    ) throws(Rejection) -> Effect<Action> {
        try base.reduce(into: &state, action: step(state, action, context), context: context)
    }

    public func reduceRecordingPatches(
        into state: inout State, action: Action, context: ReducerContext
    ) throws(StoreError) -> Reduction<Action> {
        let passed: Action
        do {
            passed = try step(state, action, context)
        } catch {
            throw .rejected(error.message)
        }
        return try base.reduceRecordingPatches(into: &state, action: passed, context: context)
    }

    public func apply(_ patch: JSONPatch, to state: inout State) throws(StoreError) {
        try base.apply(patch, to: &state)
    }

    /// The wrapped reducer's compensation of the action as sent: a step that enriches should leave what the
    /// compensation depends on (such as ids) alone.
    public func encodedCompensation(for action: Action, in state: State, context: ReducerContext) -> JSON? {
        base.encodedCompensation(for: action, in: state, context: context)
    }

    public func takeBack(
        _ compensation: JSON, in state: inout State
    ) throws(StoreError) -> (reduction: Reduction<Action>, compensation: JSON?) {
        try base.takeBack(compensation, in: &state)
    }
}

extension Reducer {
    /// This reducer with `step` in front of it: see ``Middleware``.
    public func middleware(_ step: @escaping Middleware<Self>.Step) -> Middleware<Self> {
        Middleware(self, step: step)
    }
}
