import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LockstepJSON

/// Reads a room over HTTP on its server's port (`GET /rooms/ROOM...`), from the WebSocket address the client was
/// given: what the client needs that the WebSocket does not carry (a past state, the pending timers).
enum RoomHTTP {
    /// The JSON answer to `GET` of the room at `roomURL` (`ws://HOST:PORT/rooms/ROOM`; a `token=` query becomes a
    /// Bearer header) followed by `suffix` (`/timers`) and `query` (`version=3`); `what` names it in errors.
    static func get(roomURL: String, suffix: String = "", query: String = "", what: String) async throws(CommandError)
        -> JSON
    {
        let parts = roomURL.split(separator: "?", maxSplits: 1)
        let schemes = [("ws://", "http://"), ("wss://", "https://")]
        guard let base = parts.first, let scheme = schemes.first(where: { base.hasPrefix($0.0) }),
            let url = URL(
                string: scheme.1 + base.dropFirst(scheme.0.count) + suffix + (query.isEmpty ? "" : "?" + query))
        else {
            throw .failed("reading \(what) needs a ws:// or wss:// room URL")
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
                    "the server cannot show \(what) (HTTP \(status)): "
                        + String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            }
            return try JSON(parsing: Array(data))
        } catch let error as CommandError {
            throw error
        } catch {
            throw .failed("cannot read \(what): \(error.localizedDescription)")
        }
    }
}
