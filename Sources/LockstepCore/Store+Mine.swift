import LockstepJSON

extension Store {
    /// Undo mine: takes back the sender's newest change still in effect, on top of everyone's later changes, as one
    /// new change.
    ///
    /// The change's compensation runs when it has one; otherwise its inverse patch, if every place it wrote still
    /// holds what it wrote (else ``StoreError/conflict(_:)``, and nothing changes).
    public mutating func undoMine(context: ReducerContext) throws(StoreError) -> Change {
        guard let author = context.sender?.author, let next = history.authors.nextUndo(by: author) else {
            throw .nothingToUndo
        }
        return try takeBack(next.taking, as: .undoMine(of: next.of, taking: next.taking.version), context: context)
    }

    /// Redo mine: re-applies the change the sender's newest undo mine still in effect took back, by taking back
    /// that undo mine.
    public mutating func redoMine(context: ReducerContext) throws(StoreError) -> Change {
        guard let author = context.sender?.author, let next = history.authors.nextRedo(by: author) else {
            throw .nothingToRedo
        }
        return try takeBack(next.taking, as: .redoMine(of: next.of, taking: next.taking.version), context: context)
    }

    private mutating func takeBack(
        _ record: AuthorHistory.Record, as kind: Change.Kind, context: ReducerContext
    ) throws(StoreError) -> Change {
        let forward: JSONPatch
        let inverse: JSONPatch
        let compensation: JSON?
        if let kept = record.compensation {
            let reducer = self.reducer
            let taken = try reducer.takeBack(kept, in: &state)
            (forward, inverse, compensation) = (taken.reduction.forward, taken.reduction.inverse, taken.compensation)
        } else {
            try checkUnchanged(since: record)
            let applied: AppliedPatch
            do {
                applied = try applyRecording(record.inverse)
            } catch {
                throw .conflict("the change of version \(record.version) no longer applies")
            }
            (forward, inverse, compensation) = (applied.forward, applied.inverse, nil)
        }
        version += 1
        history.record(HistoryEntry(version: version, forward: forward, inverse: inverse))
        let change = Change(version: version, patch: forward, inverse: inverse, kind: kind)
        history.note(change, author: record.author, compensation: compensation, time: context.time)
        return change
    }

    /// Applies `patch` and returns it as performed on the state as it is, with its inverse. The change's own
    /// forward patch is not that inverse: the room moved on since (a `move` took along what is there now).
    private mutating func applyRecording(_ patch: JSONPatch) throws -> AppliedPatch {
        guard R.State.self == JSON.self else {
            var document = try stateJSON()
            let applied = try patch.applyRecording(to: &document)
            try apply(patch)
            return applied
        }
        // In place, without copying the document.
        return try withUnsafeMutablePointer(to: &state) { pointer in
            try pointer.withMemoryRebound(to: JSON.self, capacity: 1) { try patch.applyRecording(to: &$0.pointee) }
        }
    }

    /// Throws ``StoreError/conflict(_:)`` unless every place `record`'s change wrote still holds what it wrote.
    ///
    /// A JSON state is read where it is, and no copy of it outlives the check: the inverse patch then applies in
    /// place without copying the document.
    private func checkUnchanged(since record: AuthorHistory.Record) throws(StoreError) {
        let written = WrittenValues(record.forward)
        let changed: JSONPointer?
        if let json = state as? JSON {
            changed = written.firstChanged(in: json)
        } else {
            changed = written.firstChanged(in: try stateJSON())
        }
        if let changed { throw .conflict("\(changed) was changed since version \(record.version)") }
    }
}
