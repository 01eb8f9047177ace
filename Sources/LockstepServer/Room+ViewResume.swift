import LockstepCore
import LockstepJSON
import LockstepTransport

/// Resuming a view (`?path=`, or the whole room under private parts) from the room's own resume window, whether or not
/// a client of that view stayed connected.
extension Room {
    /// `logged`, released patches of a room with private parts `parts`, as `view` sees them; nil when one cannot be
    /// read or the state it needs cannot be rebuilt. Work follows the patches' operations: `state(V)`, the room's
    /// state at version `V`, is read only for a change that replaces the view as a whole, to leave out one that left
    /// it as it was.
    static func patches(
        _ logged: [LoggedPatch], seenThrough view: RoomView, parts: PrivateParts, state: (Int) throws -> JSON
    ) -> [OutboundFrame]? {
        var frames: [OutboundFrame] = []
        for patch in logged {
            guard let message = try? JSON(parsing: patch.frame.payload), let opsJSON = message["ops"],
                let ops = try? JSONPatch(json: opsJSON), let undo = message["undo"]?.intValue,
                let redo = message["redo"]?.intValue
            else { return nil }
            let projection: PathView.Projection?
            do {
                projection = try view.project(ops, parts: parts, after: { try state(patch.version) })
                if case .replaced(let next)? = projection,
                    view.value(in: try state(patch.version - 1), parts: parts) == next
                {
                    continue
                }
            } catch {
                return nil
            }
            guard let projection else { continue }
            var cause = patch.cause
            if view.redacts, !patch.touched.isVisible(to: view.reader) { cause.action = nil }
            let seen = ServerMessage.patch(
                version: patch.version, ops: projection.operations, cause: cause, undo: undo, redo: redo)
            frames.append(OutboundFrame(text: seen.serialized()))
        }
        return frames
    }
}
