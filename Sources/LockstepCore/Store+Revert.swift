public import LockstepJSON

extension Store {
    /// Makes `target`, the state this room had at `version`, the current state again as one new change.
    ///
    /// The reducer does not run: `target` was already a state of the room. The change goes into the history like
    /// an action's, so undo reverts it and redo re-applies it. Returns nil, changing nothing, when `target` equals
    /// the current state. The caller rebuilds `target` (from inverse patches or a log); the store only checks that it
    /// decodes.
    public mutating func revert(
        to version: Int, state target: JSON, context: ReducerContext = ReducerContext()
    ) throws(StoreError) -> Change? {
        let next: R.State
        do {
            next = try target.decode(R.State.self)
        } catch {
            throw .brokenState(
                "the state of version \(version) does not decode: \(DecodingErrorDescription(error).text)")
        }
        guard next != state else { return nil }

        var differ = StateDiffer()
        do {
            try differ.diffChanged(state, next, at: .root)
        } catch {
            throw .brokenState("\(error)")
        }
        self.version += 1
        let forward = JSONPatch(differ.forward)
        let inverse = JSONPatch(differ.inverse)
        history.record(HistoryEntry(version: self.version, forward: forward, inverse: inverse))
        state = next
        let change = Change(version: self.version, patch: forward, inverse: inverse, kind: .revert(to: version))
        history.note(change, author: context.sender?.author, compensation: nil, time: context.time)
        return change
    }
}
