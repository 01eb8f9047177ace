/// Feeds an action from a running effect back into its room.
///
/// Call it like a function: `await send(.tick)`. Sending after the room is gone does nothing.
public struct Send<Action: Sendable>: Sendable {
    let body: @Sendable (Action) async -> Void

    /// Wraps the delivery; the server provides one per running effect.
    public init(_ body: @escaping @Sendable (Action) async -> Void) {
        self.body = body
    }

    /// Delivers `action` to the room, which applies it as an `effect`.
    public func callAsFunction(_ action: Action) async {
        await body(action)
    }
}
