public import LockstepJSON

/// A reducer that knows how to take an action back on top of later changes: what undo mine runs.
///
/// Undo mine takes back one client's change while others keep theirs. A change's inverse patch would also erase
/// what others changed since at the same places; a compensation is an action of the app's own (adding the
/// opposite amount, removing the item by id) that takes back only what the change did. It is computed when the
/// change is made, from the state the action runs on, and kept with the change, so it survives restarts and works
/// on every server of a cluster. Taking back runs it through ``compensate(_:with:)`` like any action, so domain
/// rules hold; where it no longer makes sense, throw ``Conflict``.
///
/// An action without a compensation (return nil) is taken back by its inverse patch, and only while every place
/// it wrote still holds the value it wrote.
public protocol CompensatingReducer: Reducer {
    /// What takes an action back; often the app's own `Action`.
    associatedtype Compensation: Codable & Sendable

    /// How to take `action` back later, computed from `state`, the state it runs on; nil for the guarded inverse.
    /// Implement this or ``compensation(for:in:context:)``; the default is nil.
    func compensation(for action: Action, in state: State) -> Compensation?

    /// The same, knowing the change's context: who sent the action and when (the player whose move it was, rather
    /// than one inferred from the state). The default ignores the context.
    func compensation(for action: Action, in state: State, context: ReducerContext) -> Compensation?

    /// Takes a change back by running its compensation on `state`; returns what takes this in turn back (redo
    /// mine), or nil for its guarded inverse. Leave `state` as it was when you throw.
    func compensate(_ state: inout State, with compensation: Compensation) throws(Conflict) -> Compensation?
}

extension CompensatingReducer {
    public func compensation(for action: Action, in state: State) -> Compensation? { nil }

    public func compensation(for action: Action, in state: State, context: ReducerContext) -> Compensation? {
        compensation(for: action, in: state)
    }

    public func encodedCompensation(for action: Action, in state: State, context: ReducerContext) -> JSON? {
        compensation(for: action, in: state, context: context).flatMap { try? JSON(encoding: $0) }
    }

    public func takeBack(
        _ compensation: JSON, in state: inout State
    ) throws(StoreError) -> (reduction: Reduction<Action>, compensation: JSON?) {
        let decoded: Compensation
        do {
            decoded = try compensation.decode(Compensation.self)
        } catch {
            throw .brokenState("a kept compensation does not decode: \(DecodingErrorDescription(error).text)")
        }
        var next = state
        let reverse: Compensation?
        do {
            reverse = try compensate(&next, with: decoded)
        } catch {
            throw .conflict(error.message)
        }
        let reduction = try Self.diff(from: &state, to: next)
        guard !reduction.forward.isEmpty else { throw .conflict("taking it back would change nothing now") }
        return (reduction, reverse.flatMap { try? JSON(encoding: $0) })
    }
}
