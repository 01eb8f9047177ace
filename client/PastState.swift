import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LockstepJSON

/// Reads the state a room (or the part of it at a path) had at an earlier version (`GET /rooms/ROOM?version=V`, with
/// `&path=P`, on the server's port), without changing the room.
enum PastState {
    /// The state at `version` of the room at `roomURL` (`ws://HOST:PORT/rooms/ROOM`, a `token=` query becomes a
    /// Bearer header).
    static func fetch(roomURL: String, version: Int, path: JSONPointer = .root) async throws(CommandError) -> JSON {
        let parts = roomURL.split(separator: "?", maxSplits: 1)
        let schemes = [("ws://", "http://"), ("wss://", "https://")]
        let pathQuery = path.isRoot
            ? "" : "&path=" + (path.description.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        guard let base = parts.first, let scheme = schemes.first(where: { base.hasPrefix($0.0) }),
            let url = URL(string: scheme.1 + base.dropFirst(scheme.0.count) + "?version=\(version)" + pathQuery)
        else {
            throw .failed("view needs a ws:// or wss:// room URL")
        }
        var request = URLRequest(url: url)
        let token = parts.count == 2
            ? parts[1].split(separator: "&").first { $0.hasPrefix("token=") }?.dropFirst("token=".count) : nil
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        do {
            let (data, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else {
                throw CommandError.failed(
                    "the server cannot show v\(version) (HTTP \(status)): "
                        + String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            }
            guard let state = try JSON(parsing: Array(data))["state"] else {
                throw CommandError.failed("the server's answer has no state")
            }
            return state
        } catch let error as CommandError {
            throw error
        } catch {
            throw .failed("cannot read v\(version): \(error.localizedDescription)")
        }
    }
}
