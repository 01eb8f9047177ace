import LockstepStorage
import LockstepTransport

/// Something waiting for a room to be read from shared storage: a client joining it, or an HTTP read of it.
/// Loop-bound.
enum RoomWaiter {
    /// A client, not read from until it has joined.
    case socket(WebSocketConnection, AccessGrant)
    /// `GET /rooms/ROOM` (or its `?version=` and `/log` forms), answered once the room is in memory.
    case read(HTTPPromise, HTTPRequest)

    /// The room cannot be read: the client is sent away, the read answered 503.
    func refuse(because error: StorageError) {
        switch self {
        case .socket(let connection, _):
            if connection.isOpen { connection.close(code: 1011, reason: "the room cannot be loaded") }
        case .read(let promise, _):
            promise.complete(with: HTTPResponse(status: 503, text: "the room cannot be read: \(error)\n"))
        }
    }
}

@available(*, unavailable)
extension RoomWaiter: Sendable {}
