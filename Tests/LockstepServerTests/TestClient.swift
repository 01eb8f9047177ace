import Foundation
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTransport
import Testing

/// A WebSocket client speaking the protocol, with the mirror state a real client would keep.
///
/// Messages are read with a bounded wait, so a test that expects a message that never comes
/// fails instead of hanging.
final class TestClient: Sendable {
    let socket: WebSocket

    private init(socket: WebSocket) {
        self.socket = socket
    }

    static func connect(
        _ server: SyncServer, room: String = "test", query: String = "", using transport: WebSocketClient
    ) async throws -> TestClient {
        let url = "ws://127.0.0.1:\(server.port)/rooms/\(room)" + (query.isEmpty ? "" : "?\(query)")
        return TestClient(socket: try await WebSocket.connect(url, using: transport))
    }

    func send(_ json: JSON) {
        socket.send(json.serialized())
    }

    func send(_ message: ClientMessage) {
        send(message.json)
    }

    func sendRaw(_ text: String) {
        socket.send(Array(text.utf8))
    }
}
