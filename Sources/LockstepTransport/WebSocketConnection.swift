internal import CLibWebSockets
import DequeModule
#if canImport(Glibc)
internal import Glibc
#endif

/// One accepted WebSocket connection. Loop-bound: use it only on the server's loop thread.
///
/// A connection receives frames sent to it alone (`send`) and, when it follows a ``BroadcastStream``, the stream's
/// frames, in the order they were sent and appended. Its own frames are copied into one buffer; stream frames are
/// written straight from the stream. Each write hands as many waiting frames as fit to one `lws_write`: at the end of
/// the loop's pass for a follower whose socket has room, else in the writeable callback.
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
    /// Bytes waiting, sent or followed, not yet handed to the socket (frames given to lws are no longer counted).
    public var queuedBytes: Int { outbound.count + (lane.map { $0.head - streamPosition } ?? 0) }
    /// Bytes of frames sent to this connection (`send`) and handed to the socket since it opened. A frame sent when
    /// `sentBytes` was `n` has left once `writtenSentBytes` reaches `n`.
    public private(set) var writtenSentBytes = 0
    /// Bytes of frames sent to this connection (`send`) since it opened, whether written or not.
    public private(set) var sentBytes = 0
    /// Whether the connection is open and not closing.
    public var isOpen: Bool { wsi != nil && pendingClose == nil }

    /// Handshake headers kept for the connection's lifetime (lowercased names, present ones only).
    private let keptHeaders: [(name: String, value: String)]
    var wsi: OpaquePointer?
    unowned let server: WebSocketServer
    var outbound = OutboundBuffer()
    /// The stream this connection follows, and the position in it up to which frames were handed to the socket.
    var stream: BroadcastStream?
    /// The stream's lane this connection reads: plain frames, or their deflated forms.
    var lane: BroadcastLane?
    var streamPosition = 0
    /// Where this connection is in its stream's follower list.
    var followerIndex = -1
    /// When, on the stream's clock, it first found this connection past its lag limit at `stalledPosition` (see
    /// `BroadcastStream`).
    var stalledSince: Duration?
    var stalledPosition = 0
    /// The frames in `outbound` go out at stream positions: each segment's bytes (up to `end`, in `sentBytes`)
    /// once the stream has been written up to `position`.
    var segments: [(position: Int, end: Int)] = []
    /// Ranges of the stream this connection passes over (another frame went out in their place), in order.
    var skips: Deque<Range<Int>> = []
    var assembler = MessageAssembler()
    var pendingClose: (code: UInt16, reason: [UInt8])?
    // The flags follow an optional, so they share the padding after its tag byte: a Bool between wider fields would
    // take eight bytes, in an object a server holds for every connection.
    /// Whether the client agreed on permessage-deflate: it is sent compressed forms of frames (made once per frame)
    /// and may send compressed messages.
    public let compressesMessages: Bool
    /// Over TLS, writes wait for the writeable callback: OpenSSL may need to retry a write with the same bytes.
    let isTLS: Bool
    /// The owner asked for `connectionDidDrain` once everything queued has left.
    var drainNoticeRequested = false
    var writeRequested = false
    var didClose = false
    /// Whether reading is paused (`pauseReceiving()`).
    public private(set) var isPaused = false
    /// Payload bytes received in the server's read round `receivedRound`, to tell a read that filled the receive
    /// buffer.
    private var receivedInRound = 0
    private var receivedRound = -1

    /// Headers worth keeping after the handshake; everything else is available only in `refusal(of:)`.
    static let keptHeaderTokens: [(lws_token_indexes, String)] = [
        (WSI_TOKEN_HTTP_AUTHORIZATION, "authorization"), (WSI_TOKEN_ORIGIN, "origin"),
        (WSI_TOKEN_HTTP_USER_AGENT, "user-agent"), (WSI_TOKEN_X_FORWARDED_FOR, "x-forwarded-for"),
        (WSI_TOKEN_PROTOCOL, "sec-websocket-protocol"), (WSI_TOKEN_HTTP_COOKIE, "cookie"),
    ]

    init(id: UInt64, wsi: OpaquePointer, server: WebSocketServer, deflate: DeflateNegotiation?) {
        self.id = id
        compressesMessages = deflate != nil
        isTLS = lws_is_ssl(wsi) != 0
        if let deflate { assembler.acceptCompressed(contextTakeover: !deflate.clientNoContextTakeover) }
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
    /// Sec-WebSocket-Protocol, Cookie (others only via `UpgradeRequest` in `refusal(of:)`).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return keptHeaders.first { $0.name == wanted }?.value
    }

    /// Queues a frame for this connection alone, after everything already sent to it or appended to its stream.
    /// The same frame object may be sent to any number of connections. Ignored once closing.
    public func send(_ frame: OutboundFrame) {
        guard wsi != nil, pendingClose == nil else { return }
        send(frame, at: lane?.head ?? streamPosition)
    }

    /// Queues `frame` to go out once the stream has been written up to `position`.
    private func send(_ frame: OutboundFrame, at position: Int) {
        let frame = compressesMessages ? server.deflated(frame) : frame
        outbound.append(UnsafeRawBufferPointer(frame.bytes))
        sentBytes += frame.byteCount
        if let last = segments.last, last.position == position {
            segments[segments.count - 1].end = sentBytes
        } else {
            segments.append((position, sentBytes))
        }
        requestWritable()
    }

    /// Puts `frame` (nothing when nil) in place of the stream frame at `mark`, for this connection alone: the
    /// message as this client sees it, where the other followers share another form of it. Sent as is when the
    /// connection does not follow that stream.
    public func substitute(_ frame: OutboundFrame?, for mark: BroadcastStream.Mark, in stream: BroadcastStream) {
        guard wsi != nil, pendingClose == nil else { return }
        guard self.stream === stream, let lane else {
            if let frame { send(frame) }
            return
        }
        let range = lane === stream.plain ? mark.plain : mark.deflated
        guard range.lowerBound >= streamPosition, skips.last.map({ $0.upperBound <= range.lowerBound }) ?? true else {
            // Not reachable: a frame is substituted in the loop pass that appended it. Were it, the client would
            // miss a message; closing makes it resynchronise instead.
            assertionFailure("a substitute for a stream frame this connection has already passed")
            close(code: 1011, reason: "internal error")
            return
        }
        if !range.isEmpty { skips.append(range) }
        if let frame { send(frame, at: range.lowerBound) }
    }

    /// Whether this connection follows `stream`.
    public func follows(_ stream: BroadcastStream) -> Bool {
        self.stream === stream
    }

    /// Receives, from now on, every frame appended to `stream` (after what was sent to it before); stops following
    /// any other stream.
    public func follow(_ stream: BroadcastStream) {
        unfollow()
        guard wsi != nil else { return }
        self.stream = stream
        stream.add(self)
    }

    /// Stops receiving the stream's frames, dropping those not yet written.
    public func unfollow() {
        guard let stream else { return }
        stream.remove(self)
        streamDidEnd()
    }

    /// No longer follows its stream (it left, or the stream went away with what it still held for this connection):
    /// the frames sent to it are all due now.
    func streamDidEnd() {
        stream = nil
        lane = nil
        skips.removeAll()
        for index in segments.indices { segments[index].position = streamPosition }
    }

    /// Drops every frame sent to this connection and not yet handed to the socket (the wire stays valid: lws holds
    /// only whole frames' tails), and stops following its stream; returns how many bytes were dropped.
    @discardableResult
    public func discardQueue() -> Int {
        let dropped = queuedBytes
        unfollow()
        outbound.removeAll()
        segments.removeAll()
        sentBytes = writtenSentBytes
        return dropped
    }

    /// Asks for one `connectionDidDrain` once nothing is queued here and the peer has taken what lws held.
    public func notifyWhenDrained() {
        drainNoticeRequested = true
        requestWritable()
    }

    /// Stops reading from the socket: nothing more arrives until `resumeReceiving()`, and once the kernel's buffers
    /// fill, TCP holds the peer back. A message already being read is still delivered whole.
    public func pauseReceiving() {
        guard let wsi, !isPaused else { return }
        isPaused = true
        lws_rx_flow_control(wsi, 0)
    }

    /// Reads from the socket again, starting with whatever libwebsockets had read before the pause.
    public func resumeReceiving() {
        guard let wsi, isPaused else { return }
        isPaused = false
        // Also from outside this connection's callbacks (a timer): apply the change now, not at its next callback.
        lws_rx_flow_control(wsi, 1 | Int32(LWS_RXFLOW_REASON_FLAG_PROCESS_NOW))
    }

    /// Sends everything already queued, then a close frame with `code`; `connectionDidClose` follows.
    ///
    /// What arrives from now on is read and dropped, also on a connection whose receiving was paused: a socket closed
    /// with input it never read makes the kernel send a reset instead of the end of the stream, and the peer's kernel
    /// then throws away what the peer had not read yet, the answers queued before the close frame among them. Without
    /// TLS the socket lingers after the close frame until the peer is done (`lingeringClose`); under TLS the close
    /// frame leaves once nothing unread waits.
    public func close(code: UInt16 = 1000, reason: String = "") {
        guard let wsi, pendingClose == nil else { return }
        // A close frame's reason is limited to 123 bytes.
        pendingClose = (code, Array(reason.utf8.prefix(123)))
        // Do not wait forever on a peer that stops reading.
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, 30)
        resumeReceiving()
        requestWritable()
    }

    func requestWritable() {
        guard let wsi, !writeRequested else { return }
        writeRequested = true
        server.requestWritable(wsi)
    }

    /// `LWS_CALLBACK_SERVER_WRITEABLE`: hands as many waiting frames as fit to one `lws_write`: frames sent to this
    /// connection that are due, else the stream's frames up to the next ones sent, written from the stream's memory.
    ///
    /// Verified in libwebsockets 4.1.6 (lib/roles/ws/ops-ws.c `rops_write_role_protocol_ws`, lib/core-net/output.c
    /// `lws_issue_raw`, lib/core-net/service.c `lws_handle_POLLOUT_event`):
    /// - `LWS_WRITE_RAW` (= `LWS_WRITE_HTTP`) on a ws connection jumps to `send_raw`, which sends the buffer as is:
    ///   no framing, no masking, no extension, nothing written into the `LWS_PRE` headroom (so a run of frames in
    ///   the middle of a stream chunk can be written in place). Our bytes are already complete frames, so the wire
    ///   carries them unchanged.
    /// - One `lws_issue_raw` sends at most `tx_packet_size + LWS_PRE + 4` bytes, so the protocol's
    ///   `tx_packet_size` is set to the coalescing limit. Whatever the socket does not take is copied into the wsi's
    ///   `buflist_out` and the call still reports the full length; our buffer is free for reuse on return.
    /// - While `buflist_out` holds data, POLLOUT drains it first and the user WRITEABLE callback is not called, so
    ///   frames never interleave and this callback only runs once lws holds nothing for the connection.
    func handleWriteable() -> Int32 {
        writeRequested = false
        return writeWaiting()
    }

    /// Writes what waits at once when nothing stands in the way: no writeable callback asked for, nothing held by
    /// libwebsockets, no TLS, not closing. Otherwise asks for a writeable callback, as before.
    ///
    /// Asking first costs a pass of the loop and, on epoll, two changes of the kernel's interest set for each write;
    /// a socket with room takes the bytes now. One that takes only part has libwebsockets keep the rest and ask for
    /// the callback itself (see `handleWriteable`), so a slow reader is back on the callback path.
    func flush() {
        guard let wsi, !writeRequested, pendingClose == nil, !isTLS, lws_partial_buffered(wsi) == 0 else {
            return requestWritable()
        }
        if writeWaiting() < 0 { lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC) }
    }

    /// Where a lingering close stands (see `lingeringClose`).
    private var closeFrame = CloseFrame.queued

    private enum CloseFrame {
        case queued, written, shut
    }

    /// Without TLS the close frame goes out as bytes of its own and the write side of the socket is shut: the peer
    /// reads everything before it, then the end of the stream, while what it still sends (a client in the middle of
    /// a burst) is read and dropped. libwebsockets closes the connection once the peer's close or the end of its
    /// stream arrives, or at the close's timeout; the socket is never closed with input still arriving, which would
    /// reset it and take the close frame and the answers before it away from the peer.
    private func lingeringClose(_ close: (code: UInt16, reason: [UInt8]), wsi: OpaquePointer) -> Int32 {
        switch closeFrame {
        case .queued:
            let payload = [UInt8(close.code >> 8), UInt8(close.code & 0xFF)] + close.reason
            let frame = OutboundFrame(opcode: 0x8, compressed: false, payload: payload)
            let pointer = frame.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard server.send(wsi, pointer, frame.byteCount, LWS_WRITE_HTTP) >= 0 else { return -1 }
            closeFrame = .written
            fallthrough
        case .written:
            // Bytes libwebsockets still holds go out before the write side is shut.
            guard lws_partial_buffered(wsi) == 0 else {
                requestWritable()
                return 0
            }
            Glibc.shutdown(lws_get_socket_fd(wsi), Int32(SHUT_WR))
            closeFrame = .shut
            return 0
        case .shut:
            return 0
        }
    }

    /// One write of what waits, as described at `handleWriteable`; -1 when the connection must close.
    private func writeWaiting() -> Int32 {
        guard let wsi else { return -1 }
        passSkips()
        let streamPending = lane.map { streamPosition < $0.head } ?? false
        guard streamPending || !segments.isEmpty else {
            if let close = pendingClose {
                if !isTLS { return lingeringClose(close, wsi: wsi) }
                // libwebsockets closes the socket right after the close frame: input still unread then would reset
                // it, so the frame waits until what the peer sent is read (bounded by the close's timeout).
                if CLibWebSockets_input_waiting(lws_get_socket_fd(wsi)) != 0 {
                    requestWritable()
                    return 0
                }
                var reason = close.reason
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(close.code)), &reason, reason.count)
                return -1
            }
            // Writable with nothing waiting and nothing held by lws: the peer has taken everything.
            drainedNotice()
            return 0
        }
        let limit = server.configuration.coalesceBytes
        let next: (bytes: UnsafeRawBufferPointer, sent: Int, streamed: Int)
        if segments.isEmpty, let lane {
            // Only broadcasts: straight from the stream, up to the next frame this connection passes over.
            let bytes = lane.span(from: streamPosition, to: skips.first?.lowerBound ?? lane.head, limit: limit)
            next = (bytes, 0, bytes.count)
        } else if !streamPending {
            // Only frames sent to this connection, all due: straight from its buffer.
            let due = outbound.count
            let length = due <= limit ? due : FrameHeader.wholeFrames(at: outbound.head, count: due, upTo: limit)
            next = (UnsafeRawBufferPointer(start: outbound.head, count: length), length, 0)
        } else {
            next = interleave(limit: limit)
        }
        let pointer = UnsafeMutablePointer(mutating: next.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        if server.send(wsi, pointer, next.bytes.count, LWS_WRITE_HTTP) < 0 { return -1 }
        if next.sent > 0 {
            outbound.removeFirst(next.sent)
            writtenSentBytes += next.sent
            let done = segments.prefix { $0.end <= writtenSentBytes }.count
            // All written: a fresh empty array, since removing elements keeps the storage, which an idle connection
            // would hold on to.
            if done == segments.count { segments = [] } else { segments.removeFirst(done) }
        }
        if next.streamed > 0, let lane {
            streamPosition += next.streamed
            if streamPosition == lane.head { lane.caughtUp() }
        }
        passSkips()
        if !segments.isEmpty || (lane.map { streamPosition < $0.head } ?? false) {
            requestWritable()
        } else {
            if pendingClose != nil { requestWritable() }
            drainedNotice()
        }
        return 0
    }

    /// Moves past the stream frames another frame replaced for this connection, once everything before them has
    /// been written (that frame goes out from `segments`, at the skipped frame's position).
    private func passSkips() {
        guard let lane else { return }
        while let skip = skips.first, skip.lowerBound <= streamPosition {
            skips.removeFirst()
            let behind = streamPosition < lane.head
            streamPosition = max(streamPosition, skip.upperBound)
            if behind, streamPosition == lane.head { lane.caughtUp() }
        }
        if skips.isEmpty { skips = [] }
    }

    /// Frames sent to this connection between broadcasts (a writer's acks between patches): copied, in order, into
    /// the server's write buffer, so one write carries them all. A first frame bigger than `limit` goes alone.
    private func interleave(limit: Int) -> (bytes: UnsafeRawBufferPointer, sent: Int, streamed: Int) {
        let base = server.writeBuffer + CLibWebSockets_LWS_PRE
        var used = 0
        var sent = 0
        var position = streamPosition
        var index = 0
        var skip = 0
        while used < limit {
            if skip < skips.count, skips[skip].lowerBound <= position {
                position = max(position, skips[skip].upperBound)
                skip += 1
                continue
            }
            if index < segments.count, segments[index].position <= position {
                let count = segments[index].end - (writtenSentBytes + sent)
                guard used + count <= limit else {
                    if used > 0 { break }
                    let length = FrameHeader.wholeFrames(at: outbound.head, count: count, upTo: limit)
                    return (UnsafeRawBufferPointer(start: outbound.head, count: length), length, 0)
                }
                (base + used).copyMemory(from: outbound.head + sent, byteCount: count)
                used += count
                sent += count
                index += 1
            } else if let lane, position < lane.head {
                let end = min(
                    index < segments.count ? segments[index].position : lane.head,
                    skip < skips.count ? skips[skip].lowerBound : lane.head)
                let span = lane.span(from: position, to: end, limit: limit - used)
                guard span.count <= limit - used else {
                    if used > 0 { break }
                    return (span, 0, span.count)
                }
                (base + used).copyMemory(from: span.baseAddress!, byteCount: span.count)
                used += span.count
                position += span.count
            } else {
                break
            }
        }
        return (UnsafeRawBufferPointer(start: base, count: used), sent, position - streamPosition)
    }

    /// Once a round's messages reach half the receive buffer, asks the kernel whether more input waits; if so, the
    /// server reads it again in this pass, and puts off the pass's stream wakes while some still waits (see
    /// `WebSocketServer.readWaitingInput` and `wakeStreams`). One check per connection a round.
    private func noteInputWaiting(afterReceiving length: Int, wsi: OpaquePointer) {
        if receivedRound != server.readRound {
            receivedRound = server.readRound
            receivedInRound = 0
        }
        let threshold = server.configuration.receiveBufferBytes / 2
        let before = receivedInRound
        receivedInRound += length
        guard before < threshold, receivedInRound >= threshold, !isPaused else { return }
        if CLibWebSockets_input_waiting(lws_get_socket_fd(wsi)) != 0 { server.inputWaiting.append(self) }
    }

    /// Reads this connection's waiting input once more, within the pass (see `noteInputWaiting`).
    func readAgain() {
        guard let wsi, isOpen, !isPaused else { return }
        CLibWebSockets_read_again(wsi)
    }

    private func drainedNotice() {
        guard drainNoticeRequested else { return }
        drainNoticeRequested = false
        server.delegate.connectionDidDrain(self)
    }

    /// `LWS_CALLBACK_RECEIVE`: feeds one chunk to the assembler.
    func handleReceive(_ input: UnsafeMutableRawPointer?, _ length: Int) {
        // Closing: read only so that the socket ends without a reset (see `close`).
        guard let wsi, pendingClose == nil else { return }
        server.receivedInPass = true
        noteInputWaiting(afterReceiving: length, wsi: wsi)
        let message: InboundMessage?
        do {
            message = try assembler.consume(
                UnsafeRawBufferPointer(start: input, count: length),
                binary: lws_frame_is_binary(wsi) != 0,
                isFinal: lws_is_final_fragment(wsi) != 0,
                remainingInFrame: Int(lws_remaining_packet_payload(wsi)),
                limit: server.configuration.maxMessageBytes,
                compressed: compressesMessages && CLibWebSockets_frame_is_compressed(wsi) != 0
            )
        } catch {
            // RFC 7692 §8: data that does not inflate fails the connection.
            close(code: 1007, reason: error.message)
            return
        }
        if let message { server.delegate.connection(self, didReceive: message) }
    }

    /// `LWS_CALLBACK_CLOSED` (or context teardown): reports the close exactly once.
    func handleClosed() {
        wsi = nil
        unfollow()
        outbound.removeAll()
        segments.removeAll()
        guard !didClose else { return }
        didClose = true
        server.connections[id] = nil
        server.delegate.connectionDidClose(self)
    }
}

@available(*, unavailable)
extension WebSocketConnection: Sendable {}
