public import DequeModule
import LockstepJSON

/// The room's global, linear undo and redo stacks, bounded in depth.
///
/// Undo reverts the most recent change not yet undone, whoever made it; redo re-applies the most
/// recently undone one; any new change empties the redo side. Past `depth` entries the oldest
/// change can no longer be undone.
///
/// A checkpoint (``setCheckpoint()``) lets changes made after it be taken back without a copy of the history: while
/// it is set, the history keeps only what each change removes or replaces.
public struct History: Sendable, Equatable {
    /// How many changes can be undone at most.
    public let depth: Int
    /// Changes undo can take back, oldest first; undo takes the last.
    public private(set) var undoStack: Deque<HistoryEntry>
    /// Changes undone and not yet redone, oldest first; redo re-applies the last.
    public private(set) var redoStack: [HistoryEntry]
    /// Who made each recent change and how to take it back, for undo mine and redo mine.
    public private(set) var authors: AuthorHistory
    /// What the changes since the checkpoint removed or replaced, oldest first; nil without a checkpoint.
    var journal: [Step]?

    /// The stacks of a room loaded from storage (only the latest `depth` entries of each are kept), or empty ones.
    public init(
        depth: Int, undo: some Sequence<HistoryEntry> = [], redo: [HistoryEntry] = [], authors: AuthorHistory? = nil
    ) {
        precondition(depth >= 0, "an undo depth cannot be negative")
        self.depth = depth
        self.undoStack = Deque(undo.suffix(depth))
        self.redoStack = Array(redo.suffix(depth))
        self.authors = authors ?? AuthorHistory(depth: depth)
    }

    /// Equal stacks and authors; a checkpoint is not part of the value.
    public static func == (lhs: History, rhs: History) -> Bool {
        lhs.depth == rhs.depth && lhs.undoStack == rhs.undoStack && lhs.redoStack == rhs.redoStack
            && lhs.authors == rhs.authors
    }

    /// Steps that can be undone now.
    public var undoCount: Int { undoStack.count }
    /// Steps that can be redone now.
    public var redoCount: Int { redoStack.count }

    /// Records a new change: it becomes the next to undo, and nothing can be redone any more.
    mutating func record(_ entry: HistoryEntry) {
        if !redoStack.isEmpty {
            journal?.append(.redoCleared(redoStack))
            redoStack.removeAll()
        }
        guard depth > 0 else { return }
        pushUndo(entry)
    }

    mutating func popUndo() -> HistoryEntry? {
        guard let entry = undoStack.popLast() else { return nil }
        journal?.append(.undoPopped(entry))
        return entry
    }

    mutating func popRedo() -> HistoryEntry? {
        guard let entry = redoStack.popLast() else { return nil }
        journal?.append(.redoPopped(entry))
        return entry
    }

    /// Puts an undone entry where redo finds it.
    mutating func pushRedo(_ entry: HistoryEntry) {
        redoStack.append(entry)
        journal?.append(.redoPushed)
    }

    /// Puts a redone (or failed-to-undo) entry back where undo finds it, keeping the redo side.
    mutating func pushUndo(_ entry: HistoryEntry) {
        if undoStack.count == depth {
            let oldest = undoStack.removeFirst()
            journal?.append(.undoDroppedOldest(oldest))
        }
        undoStack.append(entry)
        journal?.append(.undoPushed)
    }

    /// Notes a new version in ``authors``, after the stacks recorded it: every change goes through here, so a
    /// checkpoint can take it back.
    mutating func note(_ change: Change, author: String?, compensation: JSON?, time: Int) {
        if journal != nil { journalAuthors(noting: change, author: author) }
        authors.note(change, author: author, compensation: compensation, time: time)
    }

    // MARK: - Checkpoint

    /// Whether changes are being kept since a checkpoint.
    public var hasCheckpoint: Bool { journal != nil }

    /// Sets a checkpoint at the history as it is now, replacing one already set: until it is released or rolled back
    /// to, each change keeps what it removes or replaces (no copy of the history).
    public mutating func setCheckpoint() {
        journal = []
    }

    /// Keeps the changes made since the checkpoint, and lets go of what they replaced.
    public mutating func releaseCheckpoint() {
        journal = nil
    }

    /// Takes back every change made since the checkpoint, newest first, and releases it: the history is again equal
    /// to what it was when the checkpoint was set. Without a checkpoint, nothing changes.
    public mutating func rollBackToCheckpoint() {
        guard let steps = journal else { return }
        journal = nil
        // The author history is rebuilt once from its parts, as a history loaded from storage is.
        var records = authors.records
        var redo = authors.redo
        var latestTime = authors.latestTime
        for step in steps.reversed() {
            switch step {
            case .undoPushed: undoStack.removeLast()
            case .undoDroppedOldest(let entry): undoStack.prepend(entry)
            case .undoPopped(let entry): undoStack.append(entry)
            case .redoPushed: redoStack.removeLast()
            case .redoPopped(let entry): redoStack.append(entry)
            case .redoCleared(let entries): redoStack = entries
            case .authorChanged(let record):
                if let index = records.firstIndex(where: { $0.version == record.version }) { records[index] = record }
            case .authorDroppedOldest(let record):
                records.prepend(record)
            case .authorNoted(let appended, let oldRedo, let oldTime):
                if appended { records.removeLast() }
                redo = oldRedo
                latestTime = oldTime
            }
        }
        authors = AuthorHistory(depth: authors.depth, records: records, redo: redo, latestTime: latestTime)
    }
}
