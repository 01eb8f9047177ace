import LockstepJSON

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
}
