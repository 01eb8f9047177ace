import LockstepJSON

/// An array whose elements can be compared, so the differ can find the changed run in it.
protocol DiffableArray {
    /// Adds the operations turning `old` (an array of the same type) into `self` at `path`.
    func diff(against old: Any, at path: JSONPointer, into differ: inout StateDiffer) throws
}

extension Array: DiffableArray where Element: Encodable & Equatable {
    func diff(against old: Any, at path: JSONPointer, into differ: inout StateDiffer) throws {
        guard let old = old as? [Element] else { preconditionFailure("the differ pairs values of one type") }
        let shorter = Swift.min(old.count, count)
        var prefix = 0
        while prefix < shorter, old[prefix] == self[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < shorter - prefix, old[old.count - 1 - suffix] == self[count - 1 - suffix] { suffix += 1 }

        let oldEnd = old.count - suffix
        let newEnd = count - suffix
        let paired = Swift.min(oldEnd, newEnd) - prefix
        for index in prefix..<(prefix + paired) {
            try differ.diff(old[index], self[index], at: path.appending(index: index))
        }
        // Removals from the highest index down, so every earlier index stays valid.
        for index in stride(from: oldEnd - 1, through: prefix + paired, by: -1) {
            try differ.remove(at: path.appending(index: index), oldValue: JSON(encoding: old[index]))
        }
        for index in (prefix + paired)..<Swift.max(newEnd, prefix + paired) {
            try differ.add(at: path.appending(index: index), value: JSON(encoding: self[index]))
        }
    }
}
