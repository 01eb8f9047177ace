import LockstepCore
import LockstepJSON

/// What one client of a room sees: the part it follows (`?path=`, the whole room without one) and, when the room has
/// private parts, whose they are to it (its token's subject).
///
/// Clients seeing the same get the same bytes, from one stream of the room; a room without views and private parts
/// has only its own stream.
struct RoomView: Hashable {
    let path: PathView
    /// Whether private parts apply, and to whom: the reader's token subject (nil: a token without one).
    let reader: String?
    let redacts: Bool

    /// The view whose stream this view's clients follow: every reader of a part that is not itself private shares
    /// one stream (see ``ViewStream``); a view inside someone's private part is its reader's alone.
    func streamKey(parts: PrivateParts) -> RoomView {
        guard redacts, reader != nil, !parts.hides(path.path, from: nil) else { return self }
        return RoomView(path: path, reader: nil, redacts: true)
    }

    /// The view's value in `state`.
    func value(in state: JSON, parts: PrivateParts) -> JSON {
        guard redacts else { return path.value(in: state) }
        if parts.hides(path.path, from: reader) { return .null }
        return parts.redact(path.value(in: state), at: path.path, for: reader)
    }

    /// How a change of `operations` looks from the view, without what the reader may not see; nil when it cannot
    /// touch the view.
    func project(
        _ operations: JSONPatch, parts: PrivateParts, after state: () throws -> JSON
    ) rethrows -> PathView.Projection? {
        guard let projection = try path.project(operations, after: state) else { return nil }
        guard redacts else { return projection }
        if parts.hides(path.path, from: reader) { return nil }
        switch projection {
        case .replaced(let value):
            return .replaced(parts.redact(value, at: path.path, for: reader))
        case .patched(let patch):
            var kept: [PatchOperation] = []
            for operation in patch.operations {
                let absolute = JSONPointer(tokens: path.path.tokens + operation.path.tokens)
                if parts.hides(absolute, from: reader) {
                    // Moved out of sight from where the reader sees it: to the reader, it is gone.
                    if case .move(let from, _) = operation,
                        !parts.hides(JSONPointer(tokens: path.path.tokens + from.tokens), from: reader)
                    {
                        kept.append(.remove(path: from))
                    }
                    continue
                }
                switch operation {
                case .add(let relative, let value):
                    kept.append(.add(path: relative, value: parts.redact(value, at: absolute, for: reader)))
                case .replace(let relative, let value):
                    kept.append(.replace(path: relative, value: parts.redact(value, at: absolute, for: reader)))
                case .remove:
                    kept.append(operation)
                case .move, .copy:
                    // What moves may come from a part the reader may not see: the view's whole value instead.
                    return .replaced(value(in: try state(), parts: parts))
                case .test:
                    continue
                }
            }
            return kept.isEmpty ? nil : .patched(JSONPatch(kept))
        }
    }
}
