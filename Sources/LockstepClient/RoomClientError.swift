/// Every way a room request or connection can fail, so an app can tell "the server said no" from "the network
/// dropped" and react to each (show the message, retry, or resynchronise).
public enum RoomClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not `ws://HOST[:PORT]/rooms/ROOM`; fix the address.
    case invalidURL(String)
    /// The first connection could not be made (server down, wrong port, refused handshake).
    case connectionFailed(String)
    /// The server closed the first connection before its snapshot, with the WebSocket close `code` and `reason`
    /// (1011 and "the room cannot be loaded", say); `message` is the error it sent just before, saying why, if any.
    case closedByServer(code: UInt16, reason: String, message: String?)
    /// The server refused the request; `code` is the protocol's error code (`rejected`, `nothing_to_undo`, ...).
    case server(code: String, message: String)
    /// The connection dropped while a `history` request was in flight (change requests wait in the outbox instead).
    case disconnected
    /// There is no live connection right now (reconnecting); try again once the status is `live`.
    case notConnected
    /// `close()` was called; make a new client to connect again.
    case closed
    /// A value did not encode to, or decode from, the JSON the room uses: client and server types disagree.
    case coding(String)
    /// The view's path is not a JSON Pointer (RFC 6901: empty, or `/` then tokens, `~` only as `~0` or `~1`).
    case invalidPath(String)
    /// The session name is not 1 to 64 characters of `A-Z a-z 0-9 . _ -`.
    case invalidSession(String)
    /// `limit` change requests already wait for an answer (the server is away, or slow); wait for some to return.
    case outboxFull(limit: Int)
    /// A timer's delay or name is out of the protocol's range: a delay from 0 to 7 days, a name of 1 to 64 characters
    /// of `A-Z a-z 0-9 . _ -`.
    case invalidTimer(String)
    /// The ``KeepDirectory`` cannot be created or written (permissions, a full disk); the message names the path.
    case cannotKeep(String)

    public var description: String {
        switch self {
        case .invalidURL(let url): "not a room URL: \(url) (expected ws://HOST:PORT/rooms/ROOM or wss://)"
        case .connectionFailed(let reason): "cannot connect: \(reason)"
        case .closedByServer(let code, let reason, let message):
            "cannot connect: the server closed the connection (\(code)\(reason.isEmpty ? "" : " \(reason)"))"
                + (message.map { ": \($0)" } ?? "")
        case .server(let code, let message): "\(code): \(message)"
        case .disconnected: "the connection dropped before the server answered"
        case .notConnected: "not connected (reconnecting); try again in a moment"
        case .closed: "the client is closed"
        case .coding(let reason): "client and room types disagree: \(reason)"
        case .invalidPath(let path): "not a JSON Pointer: \(path) (expected a path such as /boards/7)"
        case .invalidSession(let name): "not a session name: \(name) (1 to 64 characters of A-Z a-z 0-9 . _ -)"
        case .outboxFull(let limit): "\(limit) requests already wait for the server; try again once some returned"
        case .invalidTimer(let reason): "not a valid timer: \(reason)"
        case .cannotKeep(let reason): "cannot keep the room on disk: \(reason)"
        }
    }
}
