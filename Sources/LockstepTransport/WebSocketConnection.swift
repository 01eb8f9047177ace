internal import CLibWebSockets

/// One accepted WebSocket connection. Loop-bound: use it only on the server's loop thread.
///
/// Outbound frames are copied into one buffer and written, coalesced, when the socket is writeable; the owner
/// watches `queuedBytes` to detect slow clients and can `discardQueue()` them.
public final class WebSocketConnection {
    /// Unique per server, never reused.
    public let id: UInt64
    /// The request path, without the query.
    public let path: String
    /// URL-decoded query arguments; the first value of a repeated name wins.
    public let query: [String: String]
    /// The peer's numeric address.
    public let peerAddress: String
    /// The owner's per-connection state.
    public var context: AnyObject?
    /// Bytes queued but not yet handed to the socket (frames given to lws are no longer counted).
    public var queuedBytes: Int { outbound.count }
    /// Bytes handed to the socket since the connection opened. A frame queued when `writtenBytes + queuedBytes`
    /// was `n` has left once `writtenBytes` reaches `n`.
    public private(set) var writtenBytes = 0
    /// Whether the connection is open and not closing.
    public var isOpen: Bool { wsi != nil && pendingClose == nil }

    /// Handshake headers kept for the connection's lifetime (lowercased names, present ones only).
    private let keptHeaders: [(name: String, value: String)]
    var wsi: OpaquePointer?
    unowned let server: WebSocketServer
    var outbound = OutboundBuffer()
    /// The owner asked for `connectionDidDrain` once everything queued has left.
    var drainNoticeRequested = false
    var assembler = MessageAssembler()
    var pendingClose: (code: UInt16, reason: [UInt8])?
    var writeRequested = false
    var didClose = false

    /// Headers worth keeping after the handshake; everything else is available only in `shouldAccept`.
    static let keptHeaderTokens: [(lws_token_indexes, String)] = [
        (WSI_TOKEN_HTTP_AUTHORIZATION, "authorization"), (WSI_TOKEN_ORIGIN, "origin"),
        (WSI_TOKEN_HTTP_USER_AGENT, "user-agent"), (WSI_TOKEN_X_FORWARDED_FOR, "x-forwarded-for"),
        (WSI_TOKEN_PROTOCOL, "sec-websocket-protocol"), (WSI_TOKEN_HTTP_COOKIE, "cookie"),
    ]

    init(id: UInt64, wsi: OpaquePointer, server: WebSocketServer) {
        self.id = id
        self.wsi = wsi
        self.server = server
        path = HeaderAccess.path(wsi).path
        query = HeaderAccess.query(wsi)
        peerAddress = HeaderAccess.peer(wsi)
        keptHeaders = Self.keptHeaderTokens.compactMap { token, name in
            HeaderAccess.token(wsi, token).map { (name, $0) }
        }
    }

    /// A handshake header by case-insensitive name. Kept: Authorization, Origin, User-Agent, X-Forwarded-For,
    /// Sec-WebSocket-Protocol, Cookie (others only via `UpgradeRequest` in `shouldAccept`).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return keptHeaders.first { $0.name == wanted }?.value
    }

    /// Queues a frame; the same frame object may be queued on any number of connections. Ignored once closing.
    public func send(_ frame: OutboundFrame) {
        guard wsi != nil, pendingClose == nil else { return }
        outbound.append(UnsafeRawBufferPointer(frame.bytes))
        requestWritable()
    }

    /// Drops every frame not yet handed to the socket (the wire stays valid: lws holds only whole frames' tails);
    /// returns how many bytes were dropped. Frames queued up to `writtenBytes` had already left.
    @discardableResult
    public func discardQueue() -> Int {
        let dropped = outbound.count
        outbound.removeAll()
        return dropped
    }

    /// Asks for one `connectionDidDrain` once nothing is queued here and the peer has taken what lws held.
    public func notifyWhenDrained() {
        drainNoticeRequested = true
        requestWritable()
    }

    /// Sends everything already queued, then a close frame with `code`; `connectionDidClose` follows.
    public func close(code: UInt16 = 1000, reason: String = "") {
        guard let wsi, pendingClose == nil else { return }
        // A close frame's reason is limited to 123 bytes.
        pendingClose = (code, Array(reason.utf8.prefix(123)))
        // Do not wait forever on a peer that stops reading.
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, 30)
        requestWritable()
    }

    func requestWritable() {
        guard let wsi, !writeRequested else { return }
        writeRequested = true
        lws_callback_on_writable(wsi)
    }

    /// `LWS_CALLBACK_SERVER_WRITEABLE`: hands as many queued frames as fit to one `lws_write`.
    ///
    /// Verified in libwebsockets 4.1.6 (lib/roles/ws/ops-ws.c `rops_write_role_protocol_ws`, lib/core-net/output.c
    /// `lws_issue_raw`, lib/core-net/service.c `lws_handle_POLLOUT_event`):
    /// - `LWS_WRITE_RAW` (= `LWS_WRITE_HTTP`) on a ws connection jumps to `send_raw`, which sends the buffer as is:
    ///   no framing, no masking, no extension, nothing written into the `LWS_PRE` headroom. Our bytes are already
    ///   complete frames, so the wire carries them unchanged.
    /// - One `lws_issue_raw` sends at most `tx_packet_size + LWS_PRE + 4` bytes, so the protocol's
    ///   `tx_packet_size` is set to the coalescing limit. Whatever the socket does not take is copied into the wsi's
    ///   `buflist_out` and the call still reports the full length; our buffer is free for reuse on return.
    /// - While `buflist_out` holds data, POLLOUT drains it first and the user WRITEABLE callback is not called, so
    ///   frames never interleave and this callback only runs once lws holds nothing for the connection.
    func handleWriteable() -> Int32 {
        writeRequested = false
        guard let wsi else { return -1 }
        guard outbound.count > 0 else {
            if let close = pendingClose {
                var reason = close.reason
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(close.code)), &reason, reason.count)
                return -1
            }
            // Writable with nothing queued and nothing held by lws: the peer has taken everything.
            drainedNotice()
            return 0
        }
        let limit = server.configuration.coalesceBytes
        let length = outbound.count <= limit ? outbound.count : outbound.wholeFrames(upTo: limit)
        if lws_write(wsi, outbound.head, length, LWS_WRITE_HTTP) < 0 { return -1 }
        outbound.removeFirst(length)
        writtenBytes += length
        if outbound.count == 0 {
            if pendingClose != nil { requestWritable() }
            drainedNotice()
        } else {
            requestWritable()
        }
        return 0
    }

    private func drainedNotice() {
        guard drainNoticeRequested else { return }
        drainNoticeRequested = false
        server.delegate.connectionDidDrain(self)
    }

    /// `LWS_CALLBACK_RECEIVE`: feeds one chunk to the assembler.
    func handleReceive(_ input: UnsafeMutableRawPointer?, _ length: Int) {
        guard let wsi else { return }
        let message = assembler.consume(
            UnsafeRawBufferPointer(start: input, count: length),
            binary: lws_frame_is_binary(wsi) != 0,
            isFinal: lws_is_final_fragment(wsi) != 0,
            remainingInFrame: Int(lws_remaining_packet_payload(wsi)),
            limit: server.configuration.maxMessageBytes
        )
        if let message { server.delegate.connection(self, didReceive: message) }
    }

    /// `LWS_CALLBACK_CLOSED` (or context teardown): reports the close exactly once.
    func handleClosed() {
        wsi = nil
        outbound.removeAll()
        guard !didClose else { return }
        didClose = true
        server.connections[id] = nil
        server.delegate.connectionDidClose(self)
    }
}

@available(*, unavailable)
extension WebSocketConnection: Sendable {}
