import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Stored changes as a room keeps and releases them.
extension Room {
    /// A stored change as a room keeps it for resuming clients and `history`: its stored bytes, and whose private
    /// parts it wrote (who may see its `action`). Also its operations and undo counts, for projecting it to views;
    /// nil for a change that is not a patch message.
    static func loggedPatch(
        _ change: StoredChange, parts: PrivateParts
    ) -> (patch: LoggedPatch, ops: JSONPatch, undo: Int, redo: Int)? {
        guard let json = try? JSON(parsing: change.message),
            case .patch(let version, let ops, let cause, let undo, let redo)? = try? ServerMessage(json: json)
        else {
            return nil
        }
        var patch = LoggedPatch(version: version, cause: cause, frame: OutboundFrame(text: change.message))
        patch.touched = parts.touched(by: ops, action: cause.action)
        return (patch, ops, undo, redo)
    }

    /// A change another server committed, as a room releases it: its stored bytes for the whole room, projected for
    /// the room's `views`. `document` is the room's state before it (nil when the room has no views), and becomes the
    /// state after it. Nil for a change that is not a patch message.
    static func loggedPatch(
        _ change: StoredChange, views: inout RoomViews, document: inout JSON?
    ) -> LoggedPatch? {
        guard let (logged, ops, undo, redo) = loggedPatch(change, parts: views.parts) else { return nil }
        var patch = logged
        guard document != nil, (try? ops.apply(to: &document!)) != nil else { return patch }
        let after = document!
        patch.views = views.project(
            ops, version: patch.version, cause: patch.cause, undo: undo, redo: redo, touched: patch.touched,
            frame: patch.frame, after: { after })
        return patch
    }
}
