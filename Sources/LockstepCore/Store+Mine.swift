public import LockstepJSON

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
            do {
                try apply(record.inverse)
            } catch {
                throw .conflict("the change of version \(record.version) no longer applies")
            }
            (forward, inverse, compensation) = (record.inverse, record.forward, nil)
        }
        version += 1
        history.record(HistoryEntry(version: version, forward: forward, inverse: inverse))
        let change = Change(version: version, patch: forward, inverse: inverse, kind: kind)
        history.authors.note(change, author: record.author, compensation: compensation, time: context.time)
        return change
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
