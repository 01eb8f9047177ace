public import DequeModule
public import LockstepJSON

/// Who made each recent change of a room and how to take it back: what undo mine and redo mine walk.
///
/// Kept beside the room's global undo stacks and bounded by the same depth. A change is in effect unless a global
/// undo took it back (and no redo re-applied it), or an undo mine took it back and that undo mine is in effect. Undo
/// mine takes back an author's newest change in effect; redo mine takes back the author's newest undo mine still in
/// effect, and what it re-applies is then the author's newest change, which the next undo mine takes back.
public struct AuthorHistory: Sendable, Equatable {
    /// One change of the room with an author.
    public struct Record: Sendable, Equatable {
        /// The room's version this change produced.
        public let version: Int
        /// Whose change it is (``Sender/author``).
        public let author: String
        /// The app's compensation: the action that takes this change back on top of later ones. Without one, the
        /// guarded inverse patch does.
        public let compensation: JSON?
        /// The change as applied, and its inverse: the guarded inverse checks the one and applies the other.
        public let forward: JSONPatch
        /// Takes the state after the change back to the state before it.
        public let inverse: JSONPatch
        /// For an undo mine or a redo mine: the original change (`cause.of`), and the record it took back.
        public let mine: (of: Int, taking: Int)?
        /// An undo mine, which redo mine takes back; every other change of the author is undo mine's to take back.
        public var isUndoMine: Bool
        /// A global undo took it back, and no redo re-applied it.
        public internal(set) var undone = false
        /// The undo mine or redo mine that took it back.
        public internal(set) var takenBackBy: Int?

        /// The record of `author`'s change at `version`; the rest is what later undo and redo mines note on it.
        public init(
            version: Int, author: String, compensation: JSON?, forward: JSONPatch, inverse: JSONPatch,
            mine: (of: Int, taking: Int)? = nil, isUndoMine: Bool = false, undone: Bool = false,
            takenBackBy: Int? = nil
        ) {
            self.isUndoMine = isUndoMine
            self.version = version
            self.author = author
            self.compensation = compensation
            self.forward = forward
            self.inverse = inverse
            self.mine = mine
            self.undone = undone
            self.takenBackBy = takenBackBy
        }

        public static func == (lhs: Record, rhs: Record) -> Bool {
            lhs.version == rhs.version && lhs.author == rhs.author && lhs.compensation == rhs.compensation
                && lhs.forward == rhs.forward && lhs.inverse == rhs.inverse && lhs.mine?.of == rhs.mine?.of
                && lhs.mine?.taking == rhs.mine?.taking && lhs.isUndoMine == rhs.isUndoMine && lhs.undone == rhs.undone
                && lhs.takenBackBy == rhs.takenBackBy
        }
    }

    /// How many of the room's latest versions are kept.
    public let depth: Int
    /// Authored changes of the latest `depth` versions, oldest first.
    public private(set) var records: Deque<Record> = []
    /// Each author's undo mines that redo mine may take back, oldest first.
    public private(set) var redo: [String: [Int]] = [:]
    /// The time of the room's latest change (`cause.at`), so the next one is never earlier.
    public internal(set) var latestTime = 0

    /// The history of the latest `depth` versions, as a room loaded from storage rebuilds it.
    public init(depth: Int, records: some Sequence<Record> = [], redo: [String: [Int]] = [:], latestTime: Int = 0) {
        self.depth = depth
        self.records = Deque(records)
        self.redo = redo
        self.latestTime = latestTime
    }

    /// The record of `version`, if it is kept.
    public func record(_ version: Int) -> Record? {
        index(of: version).map { records[$0] }
    }

    /// What undo mine would take back for `author`: the original change's version, and the record whose take-back
    /// runs (the change itself, or the redo mine that last re-applied it).
    func nextUndo(by author: String) -> (of: Int, taking: Record)? {
        for record in records.reversed() where record.author == author && !record.isUndoMine && isInEffect(record) {
            return (record.mine?.of ?? record.version, record)
        }
        return nil
    }

    /// What redo mine would take back for `author`: its newest undo mine still in effect.
    func nextRedo(by author: String) -> (of: Int, taking: Record)? {
        for version in (redo[author] ?? []).reversed() {
            guard let undoMine = record(version), let mine = undoMine.mine, isInEffect(undoMine) else { continue }
            return (mine.of, undoMine)
        }
        return nil
    }

    /// Notes a new version: its record when it has an author, and what it did to the changes it took back.
    mutating func note(_ change: Change, author: String?, compensation: JSON?, time: Int) {
        latestTime = max(latestTime, time)
        switch change.kind {
        case .undo(let original): update(original) { $0.undone = true }
        case .redo(let original): update(original) { $0.undone = false }
        case .undoMine(_, let taking), .redoMine(_, let taking): update(taking) { $0.takenBackBy = change.version }
        case .action, .revert: break
        }
        trim(below: change.version - depth)
        guard let author else { return }
        let mine: (of: Int, taking: Int)?
        switch change.kind {
        case .undoMine(let original, let taking):
            mine = (original, taking)
            redo[author, default: []].append(change.version)
        case .redoMine(let original, let taking):
            mine = (original, taking)
            redo[author]?.removeAll { $0 == taking }
        default:
            mine = nil
            redo[author] = nil
        }
        var isUndoMine = false
        if case .undoMine = change.kind { isUndoMine = true }
        records.append(
            Record(
                version: change.version, author: author, compensation: compensation, forward: change.patch,
                inverse: change.inverse, mine: mine, isUndoMine: isUndoMine))
    }

    /// In effect: not taken back by a global undo, nor by an undo mine or redo mine that is in effect itself.
    ///
    /// Along the chain of takers (each taking back the one before), the first link a global undo took back is out of
    /// effect, the one before it in effect, and so on back to `record`; a chain with no such link ends in effect.
    private func isInEffect(_ record: Record) -> Bool {
        var link = record
        var position = 0
        while !link.undone {
            guard let taker = link.takenBackBy.flatMap(self.record) else { return position % 2 == 0 }
            link = taker
            position += 1
        }
        return position % 2 == 1
    }

    private mutating func update(_ version: Int, _ body: (inout Record) -> Void) {
        guard let index = index(of: version) else { return }
        body(&records[index])
    }

    private mutating func trim(below version: Int) {
        var trimmed = false
        while let first = records.first, first.version <= version {
            records.removeFirst()
            trimmed = true
        }
        guard trimmed else { return }
        let oldest = records.first?.version ?? .max
        for author in redo.keys {
            redo[author]?.removeAll { $0 < oldest }
            if redo[author]?.isEmpty == true { redo[author] = nil }
        }
    }

    /// Binary search: records are in version order.
    private func index(of version: Int) -> Int? {
        var low = 0
        var high = records.count
        while low < high {
            let middle = (low + high) / 2
            if records[middle].version < version { low = middle + 1 } else { high = middle }
        }
        return low < records.count && records[low].version == version ? low : nil
    }
}
