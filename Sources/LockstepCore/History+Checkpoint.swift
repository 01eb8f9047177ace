import DequeModule

/// What a checkpoint keeps (``History/setCheckpoint()``).
///
/// A server sharing its log applies a batch of requests before its database commits them, and takes the batch back
/// when the commit fails. A copy of the history for that would cost as much as the history's depth; keeping what each
/// change removes or replaces costs what the change costs.
extension History {
    /// One thing a change did to the history since the checkpoint, with what it removed or replaced: taken back in
    /// reverse order, the steps restore the history as it was.
    enum Step: Sendable {
        /// An entry went on top of the undo stack.
        case undoPushed
        /// The undo stack was full: its oldest entry went.
        case undoDroppedOldest(HistoryEntry)
        /// The top of the undo stack was taken (undo).
        case undoPopped(HistoryEntry)
        /// An entry went on top of the redo stack.
        case redoPushed
        /// The top of the redo stack was taken (redo).
        case redoPopped(HistoryEntry)
        /// A new change emptied the redo stack.
        case redoCleared([HistoryEntry])
        /// A record the change marked (undone, redone or taken back), as it was before.
        case authorChanged(AuthorHistory.Record)
        /// The author history's oldest record went, as it was before the change.
        case authorDroppedOldest(AuthorHistory.Record)
        /// The change was noted: whether it added a record, and the undo mines and latest time before it.
        case authorNoted(appended: Bool, redo: [String: [Int]], latestTime: Int)
    }

    /// Keeps what noting `change` is about to do to ``authors``, in the order it is taken back from the end: the record
    /// it marks, the oldest records it drops, then the note itself.
    mutating func journalAuthors(noting change: Change, author: String?) {
        let marked: Int?
        switch change.kind {
        case .undo(let original), .redo(let original): marked = original
        case .undoMine(_, let taking), .redoMine(_, let taking): marked = taking
        case .action, .revert: marked = nil
        }
        if let marked, let record = authors.record(marked) { journal?.append(.authorChanged(record)) }
        for record in authors.records {
            guard record.version <= change.version - authors.depth else { break }
            journal?.append(.authorDroppedOldest(record))
        }
        journal?.append(.authorNoted(appended: author != nil, redo: authors.redo, latestTime: authors.latestTime))
    }
}
