internal import CLibWebSockets
import DequeModule
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// One outgoing WebSocket connection. Loop-bound: use it only on its client's loop thread.
public final class WebSocketClientConnection {
    /// Unique per client.
    public let id: UInt64
    /// The owner's per-connection state.
    public var context: AnyObject?
    /// Bytes queued but not yet handed to the socket.
    public private(set) var queuedBytes = 0

    unowned let client: WebSocketClient
    var delegate: (any WebSocketClientDelegate)?
    var wsi: OpaquePointer?
    var handshakeHeaders: [(String, String)]
    var cStrings: [UnsafeMutablePointer<CChar>] = []
    var outbound = Deque<(bytes: [UInt8], binary: Bool)>()
    var assembler = MessageAssembler()
    var established = false
    var finished = false
    var pendingClose: (code: UInt16, reason: [UInt8])?
    var peerClose: (code: UInt16, reason: String)?
    var writeRequested = false

    init(id: UInt64, client: WebSocketClient, delegate: any WebSocketClientDelegate, headers: [(String, String)]) {
        self.id = id
        self.client = client
        self.delegate = delegate
        handshakeHeaders = headers
    }

    /// Queues a text message (one masked frame, written by lws).
    public func send(text: [UInt8]) { enqueue(text, binary: false) }

    /// Queues a binary message.
    public func send(binary: [UInt8]) { enqueue(binary, binary: true) }

    /// Sends what is queued, then a close frame with `code`; `clientDidClose` follows.
    public func close(code: UInt16 = 1000, reason: String = "") {
        guard !finished, pendingClose == nil else { return }
        pendingClose = (code, Array(reason.utf8.prefix(123)))
        if established { requestWritable() }
    }

    /// Stops or resumes reading from the socket (lws rx flow control), e.g. to simulate a client that stalls.
    public func setReceiving(_ on: Bool) {
        guard let wsi, established else { return }
        lws_rx_flow_control(wsi, on ? 1 : 0)
    }

    private func enqueue(_ bytes: [UInt8], binary: Bool) {
        guard !finished, pendingClose == nil else { return }
        outbound.append((bytes, binary))
        queuedBytes += bytes.count
        if established { requestWritable() }
    }

    func requestWritable() {
        guard let wsi, !writeRequested else { return }
        writeRequested = true
        lws_callback_on_writable(wsi)
    }

    func handleEstablished(_ wsi: OpaquePointer) {
        self.wsi = wsi
        established = true
        handshakeHeaders = []
        freeCStrings()
        delegate?.clientDidConnect(self)
        if !outbound.isEmpty || pendingClose != nil { requestWritable() }
    }

    /// `LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER`: adds the caller's headers to the upgrade request.
    func appendHeaders(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let input else { return 0 }
        let cursor = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        guard let start = cursor.pointee else { return 0 }
        let end = start + length
        for (name, value) in handshakeHeaders {
            var cName = Array((name + ":").utf8) + [0]
            var cValue = Array(value.utf8)
            if lws_add_http_header_by_name(wsi, &cName, &cValue, Int32(cValue.count), cursor, end) != 0 { return -1 }
        }
        return 0
    }

    /// `LWS_CALLBACK_CLIENT_WRITEABLE`: one message per callback.
    func handleWriteable() -> Int32 {
        writeRequested = false
        guard let wsi else { return -1 }
        guard let next = outbound.popFirst() else {
            if let close = pendingClose {
                var reason = close.reason
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(close.code)), &reason, reason.count)
                return -1
            }
            return 0
        }
        queuedBytes -= next.bytes.count
        client.ensureSendCapacity(next.bytes.count)
        let base = client.sendBuffer + CLibWebSockets_LWS_PRE
        next.bytes.withUnsafeBytes { bytes in
            if let source = bytes.baseAddress { base.copyMemory(from: source, byteCount: bytes.count) }
        }
        let written = lws_write(
            wsi, base.assumingMemoryBound(to: UInt8.self), next.bytes.count,
            next.binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT
        )
        if written < 0 { return -1 }
        if !outbound.isEmpty || pendingClose != nil { requestWritable() }
        return 0
    }

    func handleReceive(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) {
        let message = assembler.consume(
            UnsafeRawBufferPointer(start: input, count: length),
            binary: lws_frame_is_binary(wsi) != 0,
            isFinal: lws_is_final_fragment(wsi) != 0,
            remainingInFrame: Int(lws_remaining_packet_payload(wsi)),
            limit: client.maxMessageBytes
        )
        if let message { delegate?.client(self, didReceive: message) }
    }

    /// `LWS_CALLBACK_WS_PEER_INITIATED_CLOSE`: the payload is a big-endian code and an optional reason.
    func handlePeerClose(_ input: UnsafeMutableRawPointer?, _ length: Int) {
        guard let input, length >= 2 else { return }
        let bytes = UnsafeRawBufferPointer(start: input, count: length)
        let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        peerClose = (code, String(decoding: bytes[2...], as: UTF8.self))
    }

    /// Reports the end exactly once and drops every reference lws or the client held.
    func finish(code: UInt16?, reason: String) {
        guard !finished else { return }
        finished = true
        wsi = nil
        outbound.removeAll()
        queuedBytes = 0
        freeCStrings()
        client.connections[id] = nil
        let delegate = self.delegate
        self.delegate = nil
        let reportedCode = peerClose?.code ?? code ?? pendingClose?.code
        let reportedReason =
            peerClose?.reason ?? (reason.isEmpty ? String(decoding: pendingClose?.reason ?? [], as: UTF8.self) : reason)
        delegate?.clientDidClose(self, code: reportedCode, reason: reportedReason)
    }

    private func freeCStrings() {
        for string in cStrings { free(string) }
        cStrings = []
    }
}

@available(*, unavailable)
extension WebSocketClientConnection: Sendable {}
