import OrderedCollections

extension JSONPatch {
    /// The small patch that turns `old` into `new`, with every path under `base`.
    ///
    /// Equal subtrees yield nothing (shared storage is recognised without walking); objects yield member
    /// removes, adds and recursive changes; arrays trim the common prefix and suffix and then change,
    /// insert or remove only the middle, so one changed element costs one operation. Anything else that
    /// differs becomes one `replace`. Pass `base` when `old` and `new` sit at that path in a larger document.
    public init(from old: JSON, to new: JSON, at base: JSONPointer = .root) {
        var differ = Differ(path: base.tokens)
        differ.diff(old, new)
        self.init(differ.operations)
    }
}

/// Walks two trees side by side, keeping the current path as a token stack so unchanged parts build no pointers.
private struct Differ {
    var path: [String]
    var operations: [PatchOperation] = []

    init(path: [String]) {
        self.path = path
        self.path.reserveCapacity(path.count + 8)
    }

    private func pointer(appending token: String) -> JSONPointer {
        var tokens = path
        tokens.append(token)
        return JSONPointer(tokens: tokens)
    }

    mutating func diff(_ old: JSON, _ new: JSON) {
        switch (old, new) {
        case let (.object(a), .object(b)):
            diffObjects(a, b)
        case let (.array(a), .array(b)):
            diffArrays(a, b)
        default:
            if old != new { operations.append(.replace(path: JSONPointer(tokens: path), value: new)) }
        }
    }

    private mutating func diffObjects(_ old: JSONObject, _ new: JSONObject) {
        if old.sharesStorage(with: new) { return }
        for (key, _) in old.members where new.members[key] == nil {
            operations.append(.remove(path: pointer(appending: key)))
        }
        for (key, value) in new.members {
            if let previous = old.members[key] {
                path.append(key)
                diff(previous, value)
                path.removeLast()
            } else {
                operations.append(.add(path: pointer(appending: key), value: value))
            }
        }
    }

    private mutating func diffArrays(_ old: [JSON], _ new: [JSON]) {
        let shared = old.withUnsafeBufferPointer { a in
            new.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress && a.count == b.count }
        }
        if shared { return }
        let commonCount = min(old.count, new.count)
        // Unchanged elements usually share storage, so a bitwise check settles them without retains.
        let (prefix, suffix) = old.withUnsafeBufferPointer { a in
            new.withUnsafeBufferPointer { b in
                var prefix = 0
                while prefix < commonCount,
                    JSON.isIdentical(a.baseAddress! + prefix, b.baseAddress! + prefix) || a[prefix] == b[prefix]
                {
                    prefix += 1
                }
                var suffix = 0
                while suffix < commonCount - prefix {
                    let x = a.baseAddress! + (a.count - 1 - suffix)
                    let y = b.baseAddress! + (b.count - 1 - suffix)
                    guard JSON.isIdentical(x, y) || x.pointee == y.pointee else { break }
                    suffix += 1
                }
                return (prefix, suffix)
            }
        }
        let oldEnd = old.count - suffix
        let newEnd = new.count - suffix
        let paired = min(oldEnd, newEnd) - prefix
        for offset in 0..<paired {
            path.append(String(prefix + offset))
            diff(old[prefix + offset], new[prefix + offset])
            path.removeLast()
        }
        if oldEnd > newEnd {
            for index in stride(from: oldEnd - 1, through: prefix + paired, by: -1) {
                operations.append(.remove(path: pointer(appending: String(index))))
            }
        } else {
            for index in (prefix + paired)..<newEnd {
                operations.append(.add(path: pointer(appending: String(index)), value: new[index]))
            }
        }
    }
}
