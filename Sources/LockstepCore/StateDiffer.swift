import LockstepJSON

/// Finds the JSON Patch between two values of one `Codable` type by walking both at once.
///
/// Encoding both states whole and diffing the JSON would cost the size of the state on every
/// action. Instead the differ compares the typed values first and descends only where they
/// differ: struct members one level at a time, arrays by their common prefix and suffix, so a
/// one-item change in a large list costs a scan of cheap `==` comparisons and one encoded item.
/// Anything it cannot see into (custom unkeyed encodings, nested containers) is encoded to JSON
/// and diffed there, so the result is always correct, and small in the common cases.
struct StateDiffer {
    /// Operations taking the old state to the new one, in order.
    private(set) var forward: [PatchOperation] = []
    /// Blocks of operations each undoing one block of `forward`; applied last block first.
    private var inverseBlocks: [[PatchOperation]] = []

    /// Operations taking the new state back to the old one.
    var inverse: [PatchOperation] { inverseBlocks.reversed().flatMap { $0 } }

    /// Diffs `old` and `new`, adding the operations at `path`.
    mutating func diff<Value: Encodable>(_ old: Value, _ new: Value, at path: JSONPointer) throws {
        if let equatable = new as? any Equatable, equatable.isEqual(toValue: old) { return }
        try diffChanged(old, new, at: path)
    }

    /// Diffs two values already known to differ (the store compares states before it diffs them).
    mutating func diffChanged<Value: Encodable>(_ old: Value, _ new: Value, at path: JSONPointer) throws {
        if let leaf = LeafValue(new) {
            let oldJSON = try LeafValue(old)?.json ?? JSON(encoding: old)
            if oldJSON != leaf.json { replace(at: path, old: oldJSON, new: leaf.json) }
            return
        }
        if let newJSON = new as? JSON, let oldJSON = old as? JSON {
            diffJSON(oldJSON, newJSON, at: path)
            return
        }
        if let array = new as? any DiffableArray {
            try array.diff(against: old, at: path, into: &self)
            return
        }
        if let dictionary = new as? any DiffableDictionary {
            try dictionary.diff(against: old, at: path, into: &self)
            return
        }
        let oldShape = try ShallowEncoder.shape(of: old)
        let newShape = try ShallowEncoder.shape(of: new)
        switch (oldShape, newShape) {
        case (.leaf(let oldLeaf), .leaf(let newLeaf)):
            if oldLeaf != newLeaf { replace(at: path, old: oldLeaf, new: newLeaf) }
        case (.wrapped(let oldInner), .wrapped(let newInner)):
            try diffExistentials(oldInner, newInner, at: path)
        case (.keyed(let oldMembers), .keyed(let newMembers)):
            try diffMembers(oldMembers, newMembers, at: path)
        default:
            try diffJSON(JSON(encoding: old), JSON(encoding: new), at: path)
        }
    }

    /// Diffs two values known only as `Encodable`, typed again when both are of one type.
    mutating func diffExistentials(_ old: any Encodable, _ new: any Encodable, at path: JSONPointer) throws {
        try diffOpened(new, against: old, at: path)
    }

    private mutating func diffOpened<Value: Encodable>(
        _ new: Value, against old: any Encodable, at path: JSONPointer
    ) throws {
        if let old = old as? Value {
            try diff(old, new, at: path)
        } else {
            try diffJSON(JSON(encoding: old), JSON(encoding: new), at: path)
        }
    }

    private mutating func diffMembers(
        _ old: [ShallowEncoder.Member], _ new: [ShallowEncoder.Member], at path: JSONPointer
    ) throws {
        var unmatched = old
        for member in new {
            if let index = unmatched.firstIndex(where: { $0.key == member.key }) {
                let oldMember = unmatched.remove(at: index)
                try diffExistentials(oldMember.value, member.value, at: path.appending(member.key))
            } else {
                try add(at: path.appending(member.key), value: JSON(encoding: member.value))
            }
        }
        for member in unmatched {
            try remove(at: path.appending(member.key), oldValue: JSON(encoding: member.value))
        }
    }

    /// Adds the JSON-level diff of two subtrees, with its inverse.
    mutating func diffJSON(_ old: JSON, _ new: JSON, at path: JSONPointer) {
        let forwardBlock = JSONPatch(from: old, to: new, at: path).operations
        guard !forwardBlock.isEmpty else { return }
        forward += forwardBlock
        inverseBlocks.append(JSONPatch(from: new, to: old, at: path).operations)
    }

    mutating func replace(at path: JSONPointer, old: JSON, new: JSON) {
        forward.append(.replace(path: path, value: new))
        inverseBlocks.append([.replace(path: path, value: old)])
    }

    mutating func add(at path: JSONPointer, value: JSON) {
        forward.append(.add(path: path, value: value))
        inverseBlocks.append([.remove(path: path)])
    }

    mutating func remove(at path: JSONPointer, oldValue: JSON) {
        forward.append(.remove(path: path))
        inverseBlocks.append([.add(path: path, value: oldValue)])
    }
}

extension Equatable {
    /// `==` against a value whose type is only known at run time.
    fileprivate func isEqual(toValue other: some Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
