public import LockstepJSON

extension History {
    /// Repeats what a logged change did to the history, so a room rebuilt from its log can undo
    /// and redo exactly what it could before.
    ///
    /// `patch` is what the change applied; `inverse` reverts it (only those of actions and reverts are kept).
    /// `author`, `compensation` and `time` are what the change was stored with, for undo mine and `cause.at`.
    public mutating func replay(
        _ kind: Change.Kind, version: Int, patch: JSONPatch, inverse: JSONPatch, author: String? = nil,
        compensation: JSON? = nil, time: Int = 0
    ) throws(StoreError) {
        try replayStacks(kind, version: version, patch: patch, inverse: inverse)
        note(
            Change(version: version, patch: patch, inverse: inverse, kind: kind), author: author,
            compensation: compensation, time: time)
    }

    private mutating func replayStacks(
        _ kind: Change.Kind, version: Int, patch: JSONPatch, inverse: JSONPatch
    ) throws(StoreError) {
        switch kind {
        case .action, .revert, .undoMine, .redoMine:
            record(HistoryEntry(version: version, forward: patch, inverse: inverse))
        case .undo(let original):
            guard let entry = popUndo(), entry.version == original else {
                throw .brokenState("the log undoes version \(original), which the history cannot undo")
            }
            pushRedo(entry)
        case .redo(let original):
            guard let entry = popRedo(), entry.version == original else {
                throw .brokenState("the log redoes version \(original), which the history cannot redo")
            }
            pushUndo(entry)
        }
    }
}
