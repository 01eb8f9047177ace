import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Views (`?path=`): clients that follow part of a room get each change as it looks from there.
extension SyncServer {
    /// The refusal of a `path=` that is not a JSON Pointer; nil for one that is.
    static func pathRefusal(_ path: String) -> HTTPResponse? {
        do {
            _ = try JSONPointer(path)
            return nil
        } catch {
            return HTTPResponse(status: 400, text: "path must be a JSON Pointer such as /boards/7: \(error)\n")
        }
    }

    /// A change another server committed, as `room` releases it: its stored bytes for the whole room, projected
    /// for the room's views. `document` is the room's state before it (nil when the room has no views), and becomes
    /// the state after it. Nil for a change that is not a patch message.
    static func loggedPatch(_ change: StoredChange, in room: Room, document: inout JSON?) -> Room.LoggedPatch? {
        guard let (logged, ops, undo, redo) = loggedPatch(change, parts: room.privateParts) else { return nil }
        var patch = logged
        guard document != nil, (try? ops.apply(to: &document!)) != nil else { return patch }
        let after = document!
        patch.views = room.project(
            ops, version: patch.version, cause: patch.cause, undo: undo, redo: redo, touched: patch.touched,
            frame: patch.frame, after: { after })
        return patch
    }

    /// What an HTTP reader sees: the part `path` names, and with private parts, what its Bearer token's subject may
    /// see; nil for the whole room.
    func view(of request: HTTPRequest, path: String?) -> RoomView? {
        let pointer = path.flatMap { try? JSONPointer($0) } ?? .root
        guard !privateParts.isEmpty else {
            return pointer.isRoot ? nil : RoomView(path: PathView(path: pointer), reader: nil, redacts: false)
        }
        let token = TokenAuthority.bearerToken(in: request.header("authorization"))
        let subject = token.flatMap { try? configuration.tokens?.verify($0) }?.subject
        return RoomView(path: PathView(path: pointer), reader: subject, redacts: true)
    }
}
