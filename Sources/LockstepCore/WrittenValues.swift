import LockstepJSON

/// What a change left at the places it wrote: undo mine's guard before it applies a change's inverse patch.
///
/// Read from the change's forward operations, last write wins: an `add` or `replace` left its value, a `remove` of
/// an object member left nothing there. A place that a later operation of the same change wrote into, over or
/// beside (in one array) is left out, since its final value is not in the operations; array element removals are
/// left out too, as their place now holds the next element. The inverse patch still fails on a place it cannot
/// reach, so what is left out is still guarded by the patch itself.
struct WrittenValues {
    /// Each place, with the value the change left there (nil: nothing).
    private(set) var places: [(pointer: JSONPointer, value: JSON?)] = []

    init(_ forward: JSONPatch) {
        for operation in forward.operations {
            switch operation {
            case .add(let path, let value), .replace(let path, let value):
                overwrite(path)
                places.append((path, value))
            case .remove(let path):
                overwrite(path)
                if !Self.isArrayIndex(path) { places.append((path, nil)) }
            case .move(let from, let path):
                overwrite(from)
                overwrite(path)
            case .copy(_, let path):
                overwrite(path)
            case .test:
                break
            }
        }
    }

    /// Whether `document` still holds, at every place, what the change left there; else the first place that does
    /// not.
    func firstChanged(in document: JSON) -> JSONPointer? {
        places.first { document.value(at: $0.pointer) != $0.value }?.pointer
    }

    /// Forgets places that a write at `path` changes: the place itself, those inside or above it, and those in
    /// the same array (whose indices it may shift).
    private mutating func overwrite(_ path: JSONPointer) {
        places.removeAll { place in
            place.pointer == path || place.pointer.isStrictDescendant(of: path)
                || path.isStrictDescendant(of: place.pointer)
                || (place.pointer.parent == path.parent && Self.isArrayIndex(path))
        }
    }

    private static func isArrayIndex(_ path: JSONPointer) -> Bool {
        path.last.map { $0 == "-" || JSONPointer.arrayIndex($0) != nil } ?? false
    }
}
