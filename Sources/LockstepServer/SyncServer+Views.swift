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

    /// What an HTTP reader sees: the part `path` names, and with private parts, what its Bearer token's subject may
    /// see.
    func sight(of request: HTTPRequest, path: String?) -> any RoomSight {
        let pointer = path.flatMap { try? JSONPointer($0) } ?? .root
        guard !privateParts.isEmpty else { return roomSight(following: pointer, reader: nil, redacting: false) }
        let token = TokenAuthority.bearerToken(in: request.header("authorization"))
        let subject = token.flatMap { try? configuration.tokens?.verify($0) }?.subject
        return roomSight(following: pointer, reader: subject, redacting: true)
    }
}
