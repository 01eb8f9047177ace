/// Every way a room request or connection can fail, so an app can tell "the server said no" from "the network
/// dropped" and react to each (show the message, retry, or resynchronise).
public enum RoomClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not `ws://HOST[:PORT]/rooms/ROOM`; fix the address.
    case invalidURL(String)
    /// The first connection could not be made (server down, wrong port, refused handshake).
    case connectionFailed(String)
    /// The server refused the request; `code` is the protocol's error code (`rejected`, `nothing_to_undo`, ...).
    case server(code: String, message: String)
    /// The connection dropped while the request was in flight: the server may or may not have applied it, so it
    /// is not resent. Look at the state once reconnected before trying again.
    case disconnected
    /// There is no live connection right now (reconnecting); try again once the status is `live`.
    case notConnected
    /// `close()` was called; make a new client to connect again.
    case closed
    /// A value did not encode to, or decode from, the JSON the room uses: client and server types disagree.
    case coding(String)

    public var description: String {
        switch self {
        case .invalidURL(let url): "not a room URL: \(url) (expected ws://HOST:PORT/rooms/ROOM)"
        case .connectionFailed(let reason): "cannot connect: \(reason)"
        case .server(let code, let message): "\(code): \(message)"
        case .disconnected: "the connection dropped before the server answered; the request may or may not have applied"
        case .notConnected: "not connected (reconnecting); try again in a moment"
        case .closed: "the client is closed"
        case .coding(let reason): "client and room types disagree: \(reason)"
        }
    }
}
