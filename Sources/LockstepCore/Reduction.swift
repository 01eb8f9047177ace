public import LockstepJSON

/// What one action did to a room's state: the change as patches, and the follow-up work.
///
/// A ``PatchingReducer`` returns it; every other reducer gets one from the store's typed differ.
public struct Reduction<Action: Sendable>: Sendable {
    /// Follow-up work, as ``Reducer/reduce(into:action:)`` returns it.
    public var effect: Effect<Action>
    /// Takes the state before the action to the state after it; empty when nothing changed.
    public var forward: JSONPatch
    /// Takes the state after the action back to the state before it.
    public var inverse: JSONPatch

    /// A change as its two patches, with the follow-up work `effect`.
    public init(forward: JSONPatch, inverse: JSONPatch, effect: Effect<Action> = .none) {
        self.forward = forward
        self.inverse = inverse
        self.effect = effect
    }

    /// The operations a JSON Patch performed on a document, as ``/LockstepJSON/JSONPatch/applyRecording(to:)``
    /// returns them.
    public init(_ applied: AppliedPatch, effect: Effect<Action> = .none) {
        self.init(forward: applied.forward, inverse: applied.inverse, effect: effect)
    }
}
