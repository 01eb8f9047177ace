import LockstepCore
import LockstepJSON
import LockstepTransport

/// Resuming a view (`?path=`, or the whole room under private parts) from the room's own resume window, whether or not
/// a client of that view stayed connected.
extension Room {
    /// The patches after `version` as `view` sees them, projected from the room's released patches; nil when the
    /// room no longer has all of them. Work follows the patches' operations: `state(V)`, the room's state at version
    /// `V`, is read only for a change that replaces the view as a whole, to leave out one that left it as it was.
    func patches(
        after version: Int, seenThrough view: RoomView, state: (Int) throws -> JSON
    ) -> [OutboundFrame]? {
        guard let logged = patches(after: version) else { return nil }
        var frames: [OutboundFrame] = []
        for patch in logged {
            guard let message = try? JSON(parsing: patch.frame.payload), let opsJSON = message["ops"],
                let ops = try? JSONPatch(json: opsJSON), let undo = message["undo"]?.intValue,
                let redo = message["redo"]?.intValue
            else { return nil }
            let projection: PathView.Projection?
            do {
                projection = try view.project(ops, parts: privateParts, after: { try state(patch.version) })
                if case .replaced(let next)? = projection,
                    view.value(in: try state(patch.version - 1), parts: privateParts) == next
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
