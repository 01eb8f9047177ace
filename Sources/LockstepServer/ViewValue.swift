import LockstepCore
import LockstepJSON

/// A view's value as its clients have it, kept by applying the view's own operations: a change that replaces it by
/// an equal value is not sent, so a view gets exactly the versions that changed it.
struct ViewValue {
    let view: RoomView
    private(set) var value: JSON

    init(view: RoomView, state: JSON, parts: PrivateParts) {
        self.view = view
        value = view.value(in: state, parts: parts)
    }

    /// The operations the view's clients get for a change of `operations`, or nil when it leaves the view as it was;
    /// `state` is the room's state after the change.
    mutating func accept(_ operations: JSONPatch, parts: PrivateParts, after state: () throws -> JSON) -> JSONPatch? {
        guard let projection = try? view.project(operations, parts: parts, after: state) else { return nil }
        switch projection {
        case .replaced(let next):
            return replace(by: next)
        case .patched(let patch):
            do {
                try patch.apply(to: &value)
                return patch
            } catch {
                // Operations that do not apply to the view alone (a move from outside it): its whole value.
                return replace(by: view.value(in: (try? state()) ?? .null, parts: parts))
            }
        }
    }

    /// The room's state went back (a write taken back): the view's value is read again.
    mutating func reset(to state: JSON, parts: PrivateParts) {
        value = view.value(in: state, parts: parts)
    }

    private mutating func replace(by next: JSON) -> JSONPatch? {
        guard next != value else { return nil }
        value = next
        return PathView.Projection.replaced(next).operations
    }
}
