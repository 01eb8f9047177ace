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

    /// Projects a change another server committed for the views of `room`: `document` is the room's state before
    /// it (nil when the room has no views), and becomes the state after it.
    static func project(_ change: StoredChange, into patch: inout Room.LoggedPatch, document: inout JSON?, room: Room) {
        guard let json = try? JSON(parsing: change.message),
            case .patch(let version, let ops, let cause, let undo, let redo)? = try? ServerMessage(json: json)
        else { return }
        patch.touched = room.privateParts.touched(by: ops)
        guard document != nil, (try? ops.apply(to: &document!)) != nil else { return }
        let after = document!
        patch.views = room.project(
            ops, version: version, cause: cause, undo: undo, redo: redo, touched: patch.touched, after: { after })
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
