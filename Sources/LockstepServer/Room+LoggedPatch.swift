import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Changes as a room keeps and releases them: its own, and those stored by other servers.
extension Room {
    /// A change this server made, as the room releases it: `encoded`'s message for the whole room, whose private
    /// parts the change wrote, and how each of `views` sees it. `history` is the room's after the change, `state` its
    /// state after it.
    static func loggedPatch(
        _ change: Change, encoded: RoomTurn.Patch, history: History, views: inout RoomViews,
        after state: () throws -> JSON
    ) -> LoggedPatch {
        let cause = encoded.cause
        var patch = LoggedPatch(version: change.version, cause: cause, frame: OutboundFrame(text: encoded.bytes))
        patch.touched = views.parts.touched(by: change.patch, action: cause.action)
        patch.views = views.project(
            change.patch, version: change.version, cause: cause, undo: history.undoCount, redo: history.redoCount,
            touched: patch.touched, frame: patch.frame, after: state)
        return patch
    }

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
