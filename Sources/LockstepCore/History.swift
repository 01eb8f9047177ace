public import DequeModule

/// The room's global, linear undo and redo stacks, bounded in depth.
///
/// Undo reverts the most recent change not yet undone, whoever made it; redo re-applies the most
/// recently undone one; any new change empties the redo side. Past `depth` entries the oldest
/// change can no longer be undone.
public struct History: Sendable, Equatable {
    /// How many changes can be undone at most.
    public let depth: Int
    /// Changes undo can take back, oldest first; undo takes the last.
    public private(set) var undoStack: Deque<HistoryEntry>
    /// Changes undone and not yet redone, oldest first; redo re-applies the last.
    public private(set) var redoStack: [HistoryEntry]
    /// Who made each recent change and how to take it back, for undo mine and redo mine.
    public internal(set) var authors: AuthorHistory

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

    /// Steps that can be undone now.
    public var undoCount: Int { undoStack.count }
    /// Steps that can be redone now.
    public var redoCount: Int { redoStack.count }

    /// Records a new change: it becomes the next to undo, and nothing can be redone any more.
    mutating func record(_ entry: HistoryEntry) {
        redoStack.removeAll()
        guard depth > 0 else { return }
        if undoStack.count == depth { undoStack.removeFirst() }
        undoStack.append(entry)
    }

    mutating func popUndo() -> HistoryEntry? { undoStack.popLast() }

    mutating func popRedo() -> HistoryEntry? { redoStack.popLast() }

    /// Puts an undone entry where redo finds it.
    mutating func pushRedo(_ entry: HistoryEntry) { redoStack.append(entry) }

    /// Puts a redone (or failed-to-undo) entry back where undo finds it, keeping the redo side.
    mutating func pushUndo(_ entry: HistoryEntry) {
        if undoStack.count == depth { undoStack.removeFirst() }
        undoStack.append(entry)
    }
}
