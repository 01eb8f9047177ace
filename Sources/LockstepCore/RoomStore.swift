public import LockstepJSON

/// A store seen through JSON, whatever its reducer: what a server keeps for each room.
public protocol RoomStore: Sendable {
    /// The room's current version: 0 for a new room, one more with each change.
    var version: Int { get }
    /// The room's undo and redo stacks, and who made each recent change.
    var history: History { get }

    /// The current state as the JSON clients see.
    func stateJSON() throws(StoreError) -> JSON

    /// Decodes `action` as one of the app's actions and applies it, as the context's sender's change.
    mutating func send(json action: JSON, context: ReducerContext) throws(StoreError) -> RoomOutcome

    /// Applies an action that one of this room's effects sent; the context names the sender whose action started it.
    mutating func send(effect action: EffectAction, context: ReducerContext) throws(StoreError) -> RoomOutcome

    /// Takes back the room's latest change not yet undone (global undo); ``StoreError/nothingToUndo`` when there is
    /// none.
    mutating func undo(context: ReducerContext) throws(StoreError) -> Change
    /// Re-applies the latest globally undone change; ``StoreError/nothingToRedo`` when there is none.
    mutating func redo(context: ReducerContext) throws(StoreError) -> Change
    /// Takes back the context's sender's latest change in effect, on top of later ones (undo mine).
    mutating func undoMine(context: ReducerContext) throws(StoreError) -> Change
    /// Re-applies the change the sender's latest undo mine took back (redo mine).
    mutating func redoMine(context: ReducerContext) throws(StoreError) -> Change

    /// Makes `state`, the room's state at `version`, current again as one new change; nil when it already is.
    mutating func revert(to version: Int, state: JSON, context: ReducerContext) throws(StoreError) -> Change?

    /// Sets a checkpoint in the history (``History/setCheckpoint()``): the changes that follow can be taken back
    /// (``History/rollBackToCheckpoint()``) without a copy of it.
    mutating func setHistoryCheckpoint()
    /// Keeps the changes made since the history's checkpoint (``History/releaseCheckpoint()``).
    mutating func releaseHistoryCheckpoint()
}

extension RoomStore {
    /// Applies `action` with no sender, at time 0: for tests and tools.
    public mutating func send(json action: JSON) throws(StoreError) -> RoomOutcome {
        try send(json: action, context: ReducerContext(version: version + 1))
    }
}

/// The outcome of one action in a ``RoomStore``.
public struct RoomOutcome: Sendable {
    /// The new version, or nil when the action left the state as it was.
    public let change: Change?
    /// Follow-up work, in order.
    public let effects: [RoomEffect]
}

/// Follow-up work of a room, with its actions already typed for that room's reducer.
public enum RoomEffect: Sendable {
    /// Apply this action next.
    case send(EffectAction)
    /// Run this work; feed what it sends back with ``RoomStore/send(effect:context:)``.
    case run(@Sendable (_ send: @escaping @Sendable (EffectAction) async -> Void) async -> Void)
    /// Apply this action after `after`, as the room's timer `timer`.
    case schedule(EffectAction, after: Duration, timer: String?)
    /// Cancel the room's timer `timer`.
    case cancel(timer: String)
}

/// An action produced by an effect: the typed value for the reducer and its JSON for `cause`.
public struct EffectAction: Sendable {
    let value: any Sendable
    /// The action as clients see it in `cause.action`.
    public let json: JSON

    init<Action: Encodable & Sendable>(_ action: Action) {
        value = action
        json = (try? JSON(encoding: action)) ?? .null
    }
}

extension Store: RoomStore {
    public mutating func setHistoryCheckpoint() {
        history.setCheckpoint()
    }

    public mutating func releaseHistoryCheckpoint() {
        history.releaseCheckpoint()
    }

    public mutating func send(json action: JSON, context: ReducerContext) throws(StoreError) -> RoomOutcome {
        let decoded: R.Action
        do {
            decoded = try action.decode(R.Action.self)
        } catch {
            throw .invalidAction(DecodingErrorDescription(action: action, type: R.Action.self, error: error).text)
        }
        return try send(decoded, context: context).erased
    }

    public mutating func send(effect action: EffectAction, context: ReducerContext) throws(StoreError) -> RoomOutcome {
        guard let decoded = action.value as? R.Action else {
            throw .invalidAction("an effect sent an action of another app")
        }
        return try send(decoded, context: context).erased
    }
}

extension Store.Result {
    var erased: RoomOutcome {
        RoomOutcome(change: change, effects: effect.operations.map { operation in
            switch operation {
            case .send(let action):
                return .send(EffectAction(action))
            case .run(let body):
                return .run { deliver in await body(Send { await deliver(EffectAction($0)) }) }
            case .schedule(let action, let delay, let timer):
                return .schedule(EffectAction(action), after: delay, timer: timer)
            case .cancel(let timer):
                return .cancel(timer: timer)
            }
        })
    }
}
