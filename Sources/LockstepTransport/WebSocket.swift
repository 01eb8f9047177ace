import Synchronization

/// An async face over one `WebSocketClientConnection`, for tests and the client SDK: await the connect, iterate
/// `messages`, send from any task.
public final class WebSocket: Sendable {
    /// Every inbound message, in order; finishes when the connection closes.
    public let messages: AsyncStream<InboundMessage>

    private let client: WebSocketClient
    private let bridge: LoopBound<Bridge>
    private let closeState: Mutex<(code: UInt16?, reason: String, closed: Bool)>

    /// The close code the server sent (or ours, if we closed first); nil while open or when none was sent.
    public var closeCode: UInt16? { closeState.withLock { $0.code } }
    /// The close reason, once closed.
    public var closeReason: String { closeState.withLock { $0.reason } }
    /// Whether the connection has closed.
    public var isClosed: Bool { closeState.withLock { $0.closed } }

    /// Connects and completes after the handshake, or throws `.connectionFailed` / `.invalidURL`.
    public static func connect(
        _ url: String, headers: [String: String] = [:], using client: WebSocketClient
    ) async throws(TransportError) -> WebSocket {
        _ = try WebSocketURL(url)
        let socket = WebSocket(client: client)
        let result: Result<Void, TransportError> = await withCheckedContinuation { continuation in
            let bridge = socket.bridge
            client.loop.execute {
                bridge.value.pendingConnect = continuation
                client.connect(to: url, headers: headers, delegate: bridge.value)
            }
        }
        try result.get()
        return socket
    }

    private init(client: WebSocketClient) {
        self.client = client
        let (stream, continuation) = AsyncStream.makeStream(of: InboundMessage.self)
        messages = stream
        let state = Mutex<(code: UInt16?, reason: String, closed: Bool)>((nil, "", false))
        closeState = state
        bridge = LoopBound(Bridge(continuation: continuation))
        let bridgeBox = bridge
        bridgeBox.value.onClose = { [weak self] code, reason in
            self?.closeState.withLock { $0 = (code, reason, true) }
        }
    }

    /// Sends a text message. Any thread.
    public func send(_ text: String) { send(Array(text.utf8)) }

    /// Sends a text message from raw bytes (not validated as UTF-8). Any thread.
    public func send(_ bytes: [UInt8]) {
        let bridge = self.bridge
        client.loop.execute { bridge.value.connection?.send(text: bytes) }
    }

    /// Sends a binary message. Any thread.
    public func send(binary bytes: [UInt8]) {
        let bridge = self.bridge
        client.loop.execute { bridge.value.connection?.send(binary: bytes) }
    }

    /// Starts the close handshake; `messages` finishes once it completes. Any thread.
    public func close(code: UInt16 = 1000, reason: String = "") {
        let bridge = self.bridge
        client.loop.execute { bridge.value.connection?.close(code: code, reason: reason) }
    }

    /// Stops or resumes reading from the socket. Any thread.
    public func setReceiving(_ on: Bool) {
        let bridge = self.bridge
        client.loop.execute { bridge.value.connection?.setReceiving(on) }
    }
}

/// Turns delegate calls into the stream and the connect continuation. Loop-bound.
final class Bridge: WebSocketClientDelegate {
    let continuation: AsyncStream<InboundMessage>.Continuation
    var pendingConnect: CheckedContinuation<Result<Void, TransportError>, Never>?
    var connection: WebSocketClientConnection?
    var onClose: (@Sendable (UInt16?, String) -> Void)?

    init(continuation: AsyncStream<InboundMessage>.Continuation) {
        self.continuation = continuation
    }

    func clientDidConnect(_ connection: WebSocketClientConnection) {
        self.connection = connection
        pendingConnect?.resume(returning: .success(()))
        pendingConnect = nil
    }

    func client(_ connection: WebSocketClientConnection, didReceive message: InboundMessage) {
        continuation.yield(message)
    }

    func clientDidClose(_ connection: WebSocketClientConnection, code: UInt16?, reason: String) {
        self.connection = nil
        onClose?(code, reason)
        continuation.finish()
        pendingConnect?.resume(returning: .failure(.connectionFailed(reason)))
        pendingConnect = nil
    }
}

@available(*, unavailable)
extension Bridge: Sendable {}

/// Holds a loop-bound value inside a Sendable type.
// @unchecked Sendable: `value` is only read or mutated inside closures run on the owning ServiceLoop's thread
// (the one exception, in `WebSocket.init`, happens before the box is shared with any other thread).
final class LoopBound<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
