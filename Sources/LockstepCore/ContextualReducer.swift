/// A reducer that reads who sent an action, when, and a random source: rules such as "only an item's author may
/// remove it", an audit field, a random id that replays the same.
///
/// ```swift
/// struct Board: ContextualReducer {
///     func reduce(
///         into state: inout State, action: Action, context: ReducerContext
///     ) throws(Rejection) -> Effect<Action> {
///         guard case .add(let title) = action else { return .none }
///         state.cards.append(Card(title: title, author: context.sender?.subject, at: context.time))
///         return .none
///     }
/// }
/// ```
///
/// Implement ``Reducer/reduce(into:action:context:)``; ``Reducer/reduce(into:action:)`` then runs it with an empty
/// context (no sender, time 0), as a `TestStore` (LockstepTesting) without a context does.
public protocol ContextualReducer: Reducer {}

extension ContextualReducer {
    public func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
        try reduce(into: &state, action: action, context: ReducerContext())
    }
}
