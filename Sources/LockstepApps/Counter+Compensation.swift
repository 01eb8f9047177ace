public import LockstepCore

/// Undo mine for the counter: an amount is taken back by adding the opposite, so your `+1` is taken back even after
/// others added to the count; `reset` by its guarded inverse (a `conflict` if the count changed since).
extension Counter: CompensatingReducer {
    public func compensation(for action: Action, in state: State) -> Action? {
        switch action {
        case .increment: .add(amount: -1)
        case .decrement: .add(amount: 1)
        case .add(let amount) where amount != .min: .add(amount: -amount)
        case .add, .reset: nil
        }
    }

    public func compensate(_ state: inout State, with compensation: Action) throws(Conflict) -> Action? {
        let reverse = self.compensation(for: compensation, in: state)
        do {
            _ = try patch(&state, with: compensation)
        } catch {
            throw Conflict(error.message)
        }
        return reverse
    }
}
