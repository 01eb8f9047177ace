import Foundation
import LockstepJSON

/// Reads the state a room (or the part of it at a path) had at an earlier version (`GET /rooms/ROOM?version=V`, with
/// `&path=P`, on the server's port), without changing the room.
enum PastState {
    /// The state at `version` of the room at `roomURL` (`ws://HOST:PORT/rooms/ROOM`, a `token=` query becomes a
    /// Bearer header).
    static func fetch(roomURL: String, version: Int, path: JSONPointer = .root) async throws(CommandError) -> JSON {
        let pathQuery = path.isRoot
            ? "" : "&path=" + (path.description.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let answer = try await RoomHTTP.get(roomURL: roomURL, query: "version=\(version)" + pathQuery, what: "v\(version)")
        guard let state = answer["state"] else { throw CommandError.failed("the server's answer has no state") }
        return state
    }
}
