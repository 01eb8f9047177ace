import LockstepJSON

/// A string-keyed dictionary, diffed member by member in key order so patches are deterministic.
protocol DiffableDictionary {
    /// Adds the operations turning `old` (a dictionary of the same type) into `self` at `path`.
    func diff(against old: Any, at path: JSONPointer, into differ: inout StateDiffer) throws
}

extension Dictionary: DiffableDictionary where Key == String, Value: Encodable & Equatable {
    func diff(against old: Any, at path: JSONPointer, into differ: inout StateDiffer) throws {
        guard let old = old as? [String: Value] else { preconditionFailure("the differ pairs values of one type") }
        var changed: [String] = []
        for (key, value) in self where old[key] != value { changed.append(key) }
        for key in old.keys where self[key] == nil { changed.append(key) }
        for key in changed.sorted() {
            switch (old[key], self[key]) {
            case (let before?, let after?):
                try differ.diff(before, after, at: path.appending(key))
            case (nil, let after?):
                try differ.add(at: path.appending(key), value: JSON(encoding: after))
            case (let before?, nil):
                try differ.remove(at: path.appending(key), oldValue: JSON(encoding: before))
            case (nil, nil):
                break
            }
        }
    }
}
