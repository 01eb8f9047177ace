public import LockstepJSON

/// Part of a room that a client follows (`?path=`): the value at one JSON Pointer, and each change as it looks
/// from there.
///
/// A change is projected from its own operations, never from the whole state: an operation inside the view keeps
/// its place relative to the view; one on the view's pointer or an ancestor of it (or one that shifts an array
/// element the pointer passes through) turns the change into one `replace` of the view's whole value, read from
/// the state after the change; anything else leaves the view as it was.
public struct PathView: Hashable, Sendable, CustomStringConvertible {
    /// The pointer the client follows (its `?path=`), from the room's root.
    public let path: JSONPointer

    /// A view of the value at `path`.
    public init(path: JSONPointer) {
        self.path = path
    }

    /// The view's value in `state`; null while the pointer does not resolve.
    public func value(in state: JSON) -> JSON {
        state.value(at: path) ?? .null
    }

    /// What a change does to the view.
    public enum Projection: Sendable, Equatable {
        /// The view's operations, relative to it.
        case patched(JSONPatch)
        /// The view may have changed as a whole: its value after the change (null where the pointer no longer
        /// resolves). Sent as one `replace` of `""` when it differs from the view's value before.
        case replaced(JSON)

        /// The operations a client of the view applies.
        public var operations: JSONPatch {
            switch self {
            case .patched(let patch): patch
            case .replaced(let value): JSONPatch([.replace(path: .root, value: value)])
            }
        }
    }

    /// How a change of `operations` looks from this view, or nil when it cannot touch the view. `state` gives the
    /// room's state after the change; it is read only when the view may have changed as a whole.
    public func project(_ operations: JSONPatch, after state: () throws -> JSON) rethrows -> Projection? {
        var relative: [PatchOperation] = []
        for operation in operations.operations {
            switch reach(of: operation) {
            case .none: continue
            case .whole: return .replaced(value(in: try state()))
            case .inside(let moved): relative.append(moved)
            }
        }
        return relative.isEmpty ? nil : .patched(JSONPatch(relative))
    }

    public var description: String { path.description }

    private enum Reach {
        case none
        case whole
        case inside(PatchOperation)
    }

    /// What one operation does to the view.
    private func reach(of operation: PatchOperation) -> Reach {
        switch operation {
        case .test:
            return .none
        case .add(let target, let value):
            return place(target, shifts: true).map { .inside(.add(path: $0, value: value)) } ?? reachOf(target, true)
        case .replace(let target, let value):
            return place(target, shifts: false).map { .inside(.replace(path: $0, value: value)) }
                ?? reachOf(target, false)
        case .remove(let target):
            return place(target, shifts: true).map { .inside(.remove(path: $0)) } ?? reachOf(target, true)
        case .move(let from, let target), .copy(let from, let target):
            let isMove: Bool
            if case .move = operation { isMove = true } else { isMove = false }
            let source = isMove ? reachOf(from, true) : Reach.none
            let destination = reachOf(target, true)
            switch (source, destination, place(from, shifts: isMove), place(target, shifts: true)) {
            case (_, _, let inFrom?, let inTo?):
                return .inside(isMove ? .move(from: inFrom, path: inTo) : .copy(from: inFrom, path: inTo))
            case (.none, .none, _, _):
                return .none
            default:
                return .whole
            }
        }
    }

    /// `target` relative to the view when it lies strictly inside it.
    private func place(_ target: JSONPointer, shifts: Bool) -> JSONPointer? {
        guard target.isStrictDescendant(of: path) else { return nil }
        return JSONPointer(tokens: Array(target.tokens.dropFirst(path.tokens.count)))
    }

    /// For a `target` not inside the view: whole when it is the view's pointer, an ancestor of it, or (for an
    /// insertion or removal) an array element at or before one the pointer passes through.
    private func reachOf(_ target: JSONPointer, _ shifts: Bool) -> Reach {
        if target.isStrictDescendant(of: path) { return .whole }
        if target == path || path.isStrictDescendant(of: target) { return .whole }
        guard shifts, let last = target.tokens.last, target.tokens.count <= path.tokens.count,
            Array(path.tokens.prefix(target.tokens.count - 1)) == Array(target.tokens.dropLast())
        else { return .none }
        let passed = path.tokens[target.tokens.count - 1]
        guard let index = JSONPointer.arrayIndex(passed) else { return .none }
        if last == "-" { return .none }
        guard let shifted = JSONPointer.arrayIndex(last) else { return .none }
        return shifted <= index ? .whole : .none
    }
}
