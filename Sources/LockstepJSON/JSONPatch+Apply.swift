import OrderedCollections

extension JSONPatch {
    /// Applies the patch in place and returns the patch that undoes it.
    ///
    /// Atomic: when an operation fails (a failed `test` included) the operations already done are undone,
    /// so `document` is left exactly as it was, member order included, and the error names the operation.
    /// Work follows the size of the patch, not of the document: containers are mutated in place while
    /// uniquely referenced, and nothing is copied up front.
    @discardableResult
    public func apply(to document: inout JSON) throws(JSONPatchError) -> JSONPatch {
        try applyRecording(to: &document, cancellingOut: false).inverse
    }

    /// Applies the patch in place like `apply(to:)` and returns what it did, spelled one way, with its inverse.
    ///
    /// A server that broadcasts the forward patch and keeps the inverse for undo needs neither a copy of the
    /// document nor a diff: both come from the operations as they are performed.
    public func applyRecording(to document: inout JSON) throws(JSONPatchError) -> AppliedPatch {
        try applyRecording(to: &document, cancellingOut: true)
    }

    /// `cancellingOut`: whether to look for operations that cancel each other out (see ``AppliedPatch``).
    private func applyRecording(
        to document: inout JSON, cancellingOut: Bool
    ) throws(JSONPatchError) -> AppliedPatch {
        var undo: [PatchEngine.UndoStep] = []
        undo.reserveCapacity(operations.count)
        var forward: [PatchOperation] = []
        forward.reserveCapacity(operations.count)
        // Operations may cancel out (an `add` then a `remove` of the same member): keep the smallest subtree
        // they all change, to compare at the end. A single operation that changed nothing is already left out.
        let scope = cancellingOut ? changedScope : nil
        let before = scope.flatMap { try? PatchEngine.value(at: $0, in: document) }
        for (index, operation) in operations.enumerated() {
            do {
                if let done = try PatchEngine.perform(operation, on: &document, undo: &undo) { forward.append(done) }
            } catch {
                PatchEngine.rollBack(undo, on: &document)
                throw JSONPatchError(
                    operationIndex: index, operationName: operation.name, path: operation.path, reason: error)
            }
        }
        if !forward.isEmpty, let scope, let before, (try? PatchEngine.value(at: scope, in: document)) == before {
            PatchEngine.rollBack(undo, on: &document)
            return AppliedPatch(forward: JSONPatch(), inverse: JSONPatch())
        }
        return AppliedPatch(forward: JSONPatch(forward), inverse: JSONPatch(undo.reversed().map(\.operation)))
    }

    /// Where operations of this patch might cancel each other out: the deepest location holding every place
    /// they write, or nil when they cannot (fewer than two write, or no two touch overlapping places).
    ///
    /// Two writes can cancel when one place contains the other, or when both are in one array and one of them
    /// inserts or removes (shifting the other's index; a move within one array too). Writes elsewhere each
    /// leave their own change.
    private var changedScope: JSONPointer? {
        if operations.count == 1, case .move = operations[0] {} else if operations.count < 2 { return nil }
        var writes: [(pointer: JSONPointer, operation: Int, shifts: Bool)] = []
        for (index, operation) in operations.enumerated() {
            switch operation {
            case .test: break
            case .replace(let path, _): writes.append((path, index, false))
            case .move(let from, let path): writes += [(from, index, true), (path, index, true)]
            default: writes.append((operation.path, index, true))
            }
        }
        let overlapping = writes.indices.contains { first in
            ((first + 1)..<writes.count).contains { second in
                let (a, b) = (writes[first].pointer, writes[second].pointer)
                // A move's own two places overlap only by sharing an array: it can swap equal elements.
                guard writes[first].operation != writes[second].operation || a.tokens.count == b.tokens.count else {
                    return false
                }
                if a == b || a.isStrictDescendant(of: b) || b.isStrictDescendant(of: a) { return true }
                return (writes[first].shifts || writes[second].shifts) && a.tokens.count == b.tokens.count
                    && a.tokens.dropLast() == b.tokens.dropLast()
            }
        }
        guard overlapping else { return nil }
        var common = Array(writes[0].pointer.tokens.dropLast())
        for write in writes.dropFirst() {
            common = Array(zip(common, write.pointer.tokens.dropLast()).prefix { $0 == $1 }.map(\.0))
        }
        return JSONPointer(tokens: common)
    }

    /// The patched copy of `document`; `document` itself is untouched.
    public func applied(to document: JSON) throws(JSONPatchError) -> JSON {
        var copy = document
        try apply(to: &copy)
        return copy
    }
}

/// The in-place mutation primitives behind `apply`.
enum PatchEngine {
    typealias Reason = JSONPatchError.Reason

    /// An inverse operation plus what RFC 6902 cannot say: the position at which a removed object member
    /// goes back, so a rollback restores member order too.
    struct UndoStep {
        var operation: PatchOperation
        var memberPosition: Int? = nil
    }

    /// Performs one operation, appending the steps that undo it, and returns it as performed: `-` replaced by the
    /// index it stood for, an `add` over an existing member spelled `replace`, a `copy` spelled as the value it
    /// added, and nil when it changed nothing (`test`, a `move` onto itself, a value replaced by an equal one, which
    /// is then put back as it was).
    @discardableResult
    static func perform(
        _ operation: PatchOperation, on document: inout JSON, undo: inout [UndoStep], memberPosition: Int? = nil
    ) throws(Reason) -> PatchOperation? {
        switch operation {
        case .add(let path, let value):
            let step = try add(value, at: path, on: &document, memberPosition: memberPosition)
            return record(step, for: value, on: &document, undo: &undo)
        case .remove(let path):
            let (_, step) = try remove(at: path, on: &document)
            undo.append(step)
            return operation
        case .replace(let path, let value):
            let step = try replace(at: path, with: value, on: &document)
            return record(step, for: value, on: &document, undo: &undo)
        case .move(let from, let path):
            if from == path {
                _ = try value(at: from, in: document)
                return nil
            }
            guard !path.isStrictDescendant(of: from) else { throw .moveIntoOwnChild(from: from, path: path) }
            let (value, removal) = try remove(at: from, on: &document)
            undo.append(removal)
            let addition = try add(value, at: path, on: &document, memberPosition: memberPosition)
            guard case .remove(let landed) = addition.operation else {
                undo.append(addition)
                return .move(from: from, path: path)
            }
            // Moving back is one step unless the value landed on an ancestor of where it came from (an array
            // element moved up into its own array): then `from` now lies inside the moved value.
            if landed == from {
                undo.removeLast()
                return nil
            }
            if from.isStrictDescendant(of: landed) {
                undo.append(addition)
            } else {
                undo[undo.count - 1] = UndoStep(
                    operation: .move(from: landed, path: from), memberPosition: removal.memberPosition)
            }
            return .move(from: from, path: landed)
        case .copy(let from, let path):
            // As performed, a copy is the value it added: the change then reads the same whatever `from` holds
            // later, when undo mine takes it back or redo mine applies it again on a room that moved on.
            return try perform(.add(path: path, value: value(at: from, in: document)), on: &document, undo: &undo)
        case .test(let path, let expected):
            let actual = try value(at: path, in: document)
            guard actual == expected else { throw .testFailed(expected: expected, actual: actual) }
            return nil
        }
    }

    /// Keeps the undo step of a value just written and names the operation as performed, or, when the value
    /// replaced an equal one, puts the old one back (its spelling, `1` against `1.0`, and member order) and
    /// returns nil.
    private static func record(
        _ step: UndoStep, for value: JSON, on document: inout JSON, undo: inout [UndoStep]
    ) -> PatchOperation? {
        switch step.operation {
        case .remove(let landed):
            undo.append(step)
            return .add(path: landed, value: value)
        case .replace(let path, let old) where old == value:
            do {
                _ = try replace(at: path, with: old, on: &document)
            } catch {
                preconditionFailure("JSON Patch could not put back \(path): \(error)")
            }
            return nil
        default:
            undo.append(step)
            return .replace(path: step.operation.path, value: value)
        }
    }

    /// Undoes completed steps, newest first. They were produced against exactly this document, so they
    /// cannot fail unless the engine itself is wrong.
    static func rollBack(_ steps: [UndoStep], on document: inout JSON) {
        var discarded: [UndoStep] = []
        for step in steps.reversed() {
            do {
                try perform(step.operation, on: &document, undo: &discarded, memberPosition: step.memberPosition)
            } catch {
                preconditionFailure("JSON Patch rollback failed at \(step.operation.json): \(error)")
            }
        }
    }

    static func value(at pointer: JSONPointer, in document: JSON) throws(Reason) -> JSON {
        var current = document
        for (depth, token) in pointer.tokens.enumerated() {
            switch current {
            case .object(let object):
                guard let member = object.members[token] else { throw .pathNotFound(pointer) }
                current = member
            case .array(let elements):
                let here = JSONPointer(tokens: Array(pointer.tokens[..<depth]))
                guard let index = JSONPointer.arrayIndex(token) else {
                    if token == "-" { throw .pathNotFound(pointer) }
                    throw .invalidArrayIndex(token: token, at: here)
                }
                guard index < elements.count else {
                    throw .indexOutOfRange(index: index, count: elements.count, at: here)
                }
                current = elements[index]
            default:
                throw .notAContainer(JSONPointer(tokens: Array(pointer.tokens[..<depth])))
            }
        }
        return current
    }

    /// Runs `body` on the value `depth` tokens down `pointer`, mutating every container on the way in place.
    ///
    /// Each container's payload is moved out of its enum (which is set to `.null` meanwhile) so it stays
    /// uniquely referenced and is not copied; `defer` puts it back on success and on error alike.
    static func withValue<Result>(
        at pointer: JSONPointer, depth: Int, limit: Int, in value: inout JSON,
        _ body: (inout JSON) throws(Reason) -> Result
    ) throws(Reason) -> Result {
        guard depth < limit else { return try body(&value) }
        let token = pointer.tokens[depth]
        if var object = value.takeObject() {
            defer { value = .object(object) }
            guard let index = object.members.index(forKey: token) else {
                throw .pathNotFound(JSONPointer(tokens: Array(pointer.tokens[...depth])))
            }
            return try withValue(at: pointer, depth: depth + 1, limit: limit, in: &object.members.values[index], body)
        }
        if var elements = value.takeArray() {
            defer { value = .array(elements) }
            let index = try arrayIndex(token, in: elements.count, pointer: pointer, depth: depth, allowEnd: false)
            return try withValue(at: pointer, depth: depth + 1, limit: limit, in: &elements[index], body)
        }
        throw .notAContainer(JSONPointer(tokens: Array(pointer.tokens[..<depth])))
    }

    private static func arrayIndex(
        _ token: String, in count: Int, pointer: JSONPointer, depth: Int, allowEnd: Bool
    ) throws(Reason) -> Int {
        // Pointers for error messages are built only on failure: this runs on every array step of every apply.
        if token == "-" {
            guard allowEnd else { throw .pathNotFound(JSONPointer(tokens: Array(pointer.tokens[...depth]))) }
            return count
        }
        guard let index = JSONPointer.arrayIndex(token) else {
            throw .invalidArrayIndex(token: token, at: JSONPointer(tokens: Array(pointer.tokens[..<depth])))
        }
        guard index < count || (allowEnd && index == count) else {
            throw .indexOutOfRange(index: index, count: count, at: JSONPointer(tokens: Array(pointer.tokens[..<depth])))
        }
        return index
    }

    static func add(
        _ newValue: JSON, at pointer: JSONPointer, on document: inout JSON, memberPosition: Int?
    ) throws(Reason) -> UndoStep {
        guard let key = pointer.tokens.last else {
            let old = document
            document = newValue
            return UndoStep(operation: .replace(path: pointer, value: old))
        }
        let depth = pointer.tokens.count - 1
        return try withValue(at: pointer, depth: 0, limit: depth, in: &document) { parent throws(Reason) in
            if var object = parent.takeObject() {
                defer { parent = .object(object) }
                if let position = memberPosition, object.members[key] == nil {
                    object.members.updateValue(newValue, forKey: key, insertingAt: min(position, object.count))
                    return UndoStep(operation: .remove(path: pointer))
                }
                if let old = object.members.updateValue(newValue, forKey: key) {
                    return UndoStep(operation: .replace(path: pointer, value: old))
                }
                return UndoStep(operation: .remove(path: pointer))
            } else if var elements = parent.takeArray() {
                defer { parent = .array(elements) }
                let index = try arrayIndex(key, in: elements.count, pointer: pointer, depth: depth, allowEnd: true)
                elements.insert(newValue, at: index)
                let landed = key == "-" ? JSONPointer(tokens: pointer.tokens.dropLast() + [String(index)]) : pointer
                return UndoStep(operation: .remove(path: landed))
            } else {
                throw .notAContainer(JSONPointer(tokens: Array(pointer.tokens.dropLast())))
            }
        }
    }

    static func remove(at pointer: JSONPointer, on document: inout JSON) throws(Reason) -> (JSON, UndoStep) {
        guard let key = pointer.tokens.last else { throw .cannotRemoveRoot }
        let depth = pointer.tokens.count - 1
        return try withValue(at: pointer, depth: 0, limit: depth, in: &document) { parent throws(Reason) in
            if var object = parent.takeObject() {
                defer { parent = .object(object) }
                guard let index = object.members.index(forKey: key) else { throw .pathNotFound(pointer) }
                let removed = object.members.remove(at: index).value
                return (removed, UndoStep(operation: .add(path: pointer, value: removed), memberPosition: index))
            } else if var elements = parent.takeArray() {
                defer { parent = .array(elements) }
                let index = try arrayIndex(key, in: elements.count, pointer: pointer, depth: depth, allowEnd: false)
                let removed = elements.remove(at: index)
                return (removed, UndoStep(operation: .add(path: pointer, value: removed)))
            } else {
                throw .notAContainer(JSONPointer(tokens: Array(pointer.tokens.dropLast())))
            }
        }
    }

    static func replace(
        at pointer: JSONPointer, with newValue: JSON, on document: inout JSON
    ) throws(Reason) -> UndoStep {
        guard let key = pointer.tokens.last else {
            let old = document
            document = newValue
            return UndoStep(operation: .replace(path: pointer, value: old))
        }
        let depth = pointer.tokens.count - 1
        return try withValue(at: pointer, depth: 0, limit: depth, in: &document) { parent throws(Reason) in
            var old = newValue
            if var object = parent.takeObject() {
                defer { parent = .object(object) }
                guard let index = object.members.index(forKey: key) else { throw .pathNotFound(pointer) }
                swap(&old, &object.members.values[index])
            } else if var elements = parent.takeArray() {
                defer { parent = .array(elements) }
                let index = try arrayIndex(key, in: elements.count, pointer: pointer, depth: depth, allowEnd: false)
                swap(&old, &elements[index])
            } else {
                throw .notAContainer(JSONPointer(tokens: Array(pointer.tokens.dropLast())))
            }
            return UndoStep(operation: .replace(path: pointer, value: old))
        }
    }
}
