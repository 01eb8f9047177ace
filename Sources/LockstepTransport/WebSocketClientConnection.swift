internal import CLibWebSockets
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// One outgoing WebSocket connection. Loop-bound: use it only on its client's loop thread.
///
/// The socket is a raw libwebsockets client connection; the handshake and framing are done here, so inbound
/// messages are read a frame at a time and can be lent to the delegate without a copy.
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
    var cStrings: [UnsafeMutablePointer<CChar>] = []
    var finished = false
    /// Until the server's answer is checked; nil once upgraded.
    private var handshake: ClientHandshake?
    private var reader: ClientFrameReader
    /// Bytes ready for the wire: the upgrade request, then masked frames (plaintext, under TLS).
    private var outbound = OutboundBuffer()
    /// `wss://`: the session that encrypts `outbound` into `wire` and decrypts what arrives.
    private let tls: TLSClientSession?
    /// Under TLS, ciphertext ready for the socket.
    private var wire = OutboundBuffer()
    /// Messages sent before the upgrade completed; framed once it has.
    private var waiting: [(opcode: UInt8, payload: [UInt8])] = []
    private var established = false
    private var pendingClose: (code: UInt16, reason: [UInt8])?
    /// A close frame (ours or the echo of the server's) is queued; nothing is sent after it.
    private var closeSent = false
    private var peerClose: (code: UInt16?, reason: String)?
    /// Why the connection is being dropped, when it is our decision (a refused handshake, a protocol violation).
    private var failure: String?
    private var writeRequested = false
    /// permessage-deflate as agreed in the handshake; nil for plain frames.
    private var deflate: ClientHandshake.ClientDeflate?
    /// Inflates the server's compressed messages; kept between them only when the server may refer back.
    private var inflater: MessageInflater?
    /// Masking keys need not be secret from this client's own user, only unpredictable to what is on the path.
    private var maskGenerator = SystemRandomNumberGenerator()
    /// When the server last sent anything (or reading resumed); the silence check reads it.
    private var lastHeard = ContinuousClock.now
    private var receiving = true

    /// `handshake` is nil only for a connection that ends before it has a socket (an invalid URL).
    init(
        id: UInt64, client: WebSocketClient, delegate: any WebSocketClientDelegate, handshake: ClientHandshake?,
        tls: TLSClientSession?
    ) {
        self.id = id
        self.tls = tls
        self.client = client
        self.delegate = delegate
        self.handshake = handshake
        reader = ClientFrameReader(limit: client.maxMessageBytes)
    }

    /// Queues a text message (one masked frame).
    public func send(text: [UInt8]) { enqueue(text, opcode: 0x1) }

    /// Queues a binary message.
    public func send(binary: [UInt8]) { enqueue(binary, opcode: 0x2) }

    /// Sends what is queued, then a close frame with `code`; `clientDidClose` follows once the server answers.
    public func close(code: UInt16 = 1000, reason: String = "") {
        guard !finished, pendingClose == nil else { return }
        pendingClose = (code, Array(reason.utf8.prefix(123)))
        if established { queueClose(code: code, reason: pendingClose!.reason) }
    }

    /// Stops or resumes reading from the socket (lws rx flow control), e.g. to simulate a client that stalls. While
    /// it does not read, hearing nothing is not the server's silence: the silence check waits.
    public func setReceiving(_ on: Bool) {
        guard let wsi, established else { return }
        lws_rx_flow_control(wsi, on ? 1 : 0)
        receiving = on
        lastHeard = .now
    }

    private func enqueue(_ payload: [UInt8], opcode: UInt8) {
        guard !finished, pendingClose == nil, !closeSent else { return }
        if established {
            queueFrame(opcode: opcode, payload: payload)
        } else {
            waiting.append((opcode, payload))
            queuedBytes += payload.count
        }
    }

    private func queueClose(code: UInt16, reason: [UInt8]) {
        guard !closeSent else { return }
        queueFrame(
            opcode: 0x8, payload: [UInt8(truncatingIfNeeded: code >> 8), UInt8(truncatingIfNeeded: code)] + reason)
        closeSent = true
        if let wsi { lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, 5) }
    }

    func requestWritable() {
        guard let wsi, !writeRequested else { return }
        writeRequested = true
        lws_callback_on_writable(wsi)
    }

    /// `LWS_CALLBACK_RAW_CONNECTED`: the TCP connection is up; the upgrade request goes out first.
    func handleConnected(_ wsi: OpaquePointer) {
        self.wsi = wsi
        freeCStrings()
        lws_set_timeout(wsi, PENDING_TIMEOUT_AWAITING_SERVER_RESPONSE, WebSocketClient.handshakeTimeoutSeconds)
        if let request = handshake?.request {
            request.withUnsafeBytes { outbound.append($0) }
            queuedBytes += request.count
        }
        // Under TLS the request waits for the handshake, whose first message goes out now.
        if let tls, case .failed(let reason) = tls.handshake() { failure = reason }
        requestWritable()
    }

    /// `LWS_CALLBACK_RAW_WRITEABLE`: sends what the socket takes; the rest stays here, not in libwebsockets.
    ///
    /// A raw libwebsockets socket with buffered output reads nothing until that output is gone, so a peer that
    /// answers a large message before reading all of it would deadlock. Writing to the descriptor directly keeps
    /// reads going whatever is still to be sent.
    func handleWriteable() -> Int32 {
        writeRequested = false
        guard let wsi else { return -1 }
        if failure != nil { return -1 }
        if let tls {
            // Encrypt a bounded slice at a time, so ciphertext never piles up far ahead of the socket.
            let slice = min(outbound.count, 64 * 1024)
            if wire.count < 64 * 1024, slice > 0 {
                let taken = tls.write(outbound.head, count: slice)
                outbound.removeFirst(taken)
                queuedBytes -= taken
            }
            tls.takeCiphertext(into: &wire)
            if wire.count > 0, !send(&wire, on: wsi, counted: false) { return -1 }
        } else if outbound.count > 0, !send(&outbound, on: wsi, counted: true) {
            return -1
        }
        if outbound.count > 0 || wire.count > 0 {
            // Plaintext waiting for the TLS handshake goes out once it is established (see `handleReceive`).
            if tls?.isEstablished != false || wire.count > 0 { requestWritable() }
            return 0
        }
        // Everything is out: after echoing the server's close there is nothing left to do.
        return closeSent && peerClose != nil ? -1 : 0
    }

    /// Writes what the socket takes of `buffer` without blocking; false when the socket failed.
    private func send(_ buffer: inout OutboundBuffer, on wsi: OpaquePointer, counted: Bool) -> Bool {
        let sent = Glibc.send(lws_get_socket_fd(wsi), buffer.head, buffer.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        if sent < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
        buffer.removeFirst(sent)
        if counted { queuedBytes -= sent }
        return true
    }

    /// Frames and masks one message into the outbound bytes.
    private func queueFrame(opcode: UInt8, payload: [UInt8]) {
        if deflate != nil, opcode == 0x1 || opcode == 0x2, payload.count >= 128 {
            let compressed = payload.withUnsafeBytes { client.deflater.compress($0) }
            if compressed.count < payload.count {
                queueFrame(opcode: opcode, payload: compressed, rsv1: true)
                return
            }
        }
        queueFrame(opcode: opcode, payload: payload, rsv1: false)
    }

    /// Frames and masks one message, as given, into the outbound bytes; `rsv1` marks it compressed.
    private func queueFrame(opcode: UInt8, payload: [UInt8], rsv1: Bool) {
        let count = payload.count
        let frameSize = FrameHeader.size(payloadCount: count, masked: true) + count
        let out = outbound.appendUninitialized(frameSize).assumingMemoryBound(to: UInt8.self)
        let headerCount = FrameHeader.write(opcode: opcode, payloadCount: count, masked: true, to: out)
        if rsv1 { out[0] |= 0x40 }
        let mask: UInt32 = maskGenerator.next()
        withUnsafeBytes(of: mask) {
            (out + headerCount).update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: 4)
        }
        let body = out + headerCount + 4
        payload.withUnsafeBytes { source in
            // Eight bytes at a time with the key repeated, then the tail byte by byte.
            let wide = UInt64(mask) | UInt64(mask) << 32
            var position = 0
            while position + 8 <= count {
                let word = source.loadUnaligned(fromByteOffset: position, as: UInt64.self) ^ wide
                UnsafeMutableRawPointer(body + position).storeBytes(of: word, as: UInt64.self)
                position += 8
            }
            withUnsafeBytes(of: mask) { key in
                while position < count {
                    body[position] = source[position] ^ key[position & 3]
                    position += 1
                }
            }
        }
        queuedBytes += frameSize
        requestWritable()
    }

    /// `LWS_CALLBACK_RAW_RX`: bytes from the socket, decrypted first under TLS.
    func handleReceive(_ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        lastHeard = .now
        let chunk = UnsafeRawBufferPointer(start: input, count: length)
        guard let tls else { return receive(chunk) }
        tls.receive(chunk)
        if !tls.isEstablished {
            switch tls.handshake() {
            case .needMore:
                requestWritable()
                return 0
            case .failed(let reason):
                failure = reason
                return -1
            case .established:
                break
            }
        }
        var result: Int32 = 0
        let ended = tls.readPlaintext { plaintext in
            result = receive(plaintext)
            return result == 0 && !finished
        }
        if result != 0 { return result }
        if let ended {
            if !established { failure = failure ?? ended }
            return -1
        }
        if tls.hasCiphertext || outbound.count > 0 { requestWritable() }
        return 0
    }

    /// The server's answer while upgrading, frames after.
    private func receive(_ chunk: UnsafeRawBufferPointer) -> Int32 {
        guard handshake != nil else { return read(chunk) }
        switch handshake!.consume(chunk) {
        case .needMore:
            return 0
        case .refused(let reason):
            failure = reason
            return -1
        case .accepted(let leftover, let deflate):
            handshake = nil
            established = true
            self.deflate = deflate
            reader.acceptsCompressed = deflate != nil
            if let wsi { lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0) }
            armSilenceCheck()
            let held = waiting
            waiting = []
            for message in held {
                queuedBytes -= message.payload.count
                queueFrame(opcode: message.opcode, payload: message.payload)
            }
            if let close = pendingClose { queueClose(code: close.code, reason: close.reason) }
            delegate?.clientDidConnect(self)
            return leftover.withUnsafeBytes { read($0) }
        }
    }

    /// `LWS_CALLBACK_TIMER`, every third of the client's `silenceLimit` once upgraded: a ping after a third of it
    /// heard nothing (the server's pong is something heard), the end of the connection after all of it.
    func handleSilenceCheck() -> Int32 {
        guard established, !closeSent else { return 0 }
        guard receiving else {
            armSilenceCheck()
            return 0
        }
        let silence = lastHeard.duration(to: .now)
        if silence >= client.silenceLimit {
            failure = "the server sent nothing for \(client.silenceLimit): the connection is taken for dead"
            return -1
        }
        if silence >= client.silenceLimit / 3 { queueFrame(opcode: 0x9, payload: []) }
        armSilenceCheck()
        return 0
    }

    private func armSilenceCheck() {
        guard let wsi else { return }
        lws_set_timer_usecs(wsi, lws_usec_t(client.silenceLimit / 3 / .microseconds(1)))
    }

    private func read(_ chunk: UnsafeRawBufferPointer) -> Int32 {
        delegate?.clientWillRead(self)
        var stop = false
        do {
            try reader.consume(chunk) { event in
                switch event {
                case .message(let compressedBytes, let binary, compressed: true):
                    guard delegate != nil else { return true }
                    switch inflate(compressedBytes) {
                    case .success(let bytes):
                        bytes.withUnsafeBytes { deliver($0, binary: binary) }
                    case .failure(let failure):
                        if case .tooLarge(let size) = failure {
                            delegate?.client(self, didReceive: .tooLarge(size))
                        } else {
                            stop = true
                            self.failure = "the server sent permessage-deflate data that does not inflate"
                            return false
                        }
                    }
                case .message(let bytes, let binary, compressed: false):
                    guard let delegate else { return true }
                    if binary {
                        delegate.client(self, didReceive: .binary(Array(bytes)))
                    } else {
                        delegate.client(self, didReceiveText: bytes)
                    }
                case .tooLarge(let size):
                    delegate?.client(self, didReceive: .tooLarge(size))
                case .ping(let payload):
                    if !closeSent { queueFrame(opcode: 0xA, payload: Array(payload)) }
                case .close(let code, let reason):
                    // Our close was answered: done. Otherwise the echo goes out, then the connection ends.
                    if closeSent {
                        stop = true
                    } else {
                        queueClose(code: code ?? 1000, reason: [])
                    }
                    peerClose = (code, String(decoding: reason, as: UTF8.self))
                    return false
                }
                return !finished
            }
        } catch {
            failure = "the server broke the WebSocket framing: \(error.message)"
            peerClose = (1002, "")
            return -1
        }
        return stop ? -1 : 0
    }

    private enum InflateFailure: Error {
        case tooLarge(Int)
        case corrupt
    }

    /// A compressed message from the server, inflated within the client's message limit.
    private func inflate(_ compressed: UnsafeRawBufferPointer) -> Result<[UInt8], InflateFailure> {
        let inflater = self.inflater ?? MessageInflater()
        let limit = client.maxMessageBytes
        var message: [UInt8] = []
        // A message cut off at the limit leaves the inflater mid-stream: it is not kept.
        var keep = deflate?.serverNoContextTakeover == false
        defer { self.inflater = keep ? inflater : nil }
        do {
            guard try inflater.inflate(compressed, into: &message, limit: limit),
                try inflater.finish(into: &message, limit: limit)
            else {
                keep = false
                return .failure(.tooLarge(message.count))
            }
        } catch {
            return .failure(.corrupt)
        }
        return .success(message)
    }

    private func deliver(_ bytes: UnsafeRawBufferPointer, binary: Bool) {
        guard let delegate else { return }
        if binary {
            delegate.client(self, didReceive: .binary(Array(bytes)))
        } else {
            delegate.client(self, didReceiveText: bytes)
        }
    }

    /// Reports the end exactly once and drops every reference lws or the client held.
    func finish(code: UInt16?, reason: String) {
        guard !finished else { return }
        finished = true
        wsi = nil
        outbound.removeAll()
        wire.removeAll()
        waiting = []
        queuedBytes = 0
        freeCStrings()
        client.connections[id] = nil
        let delegate = self.delegate
        self.delegate = nil
        let reportedCode = peerClose?.code ?? code ?? (closeSent ? pendingClose?.code : nil)
        if failure == nil, !established, reason.isEmpty {
            failure = "the server did not complete the WebSocket handshake"
        }
        let reportedReason =
            failure ?? peerClose?.reason
            ?? (reason.isEmpty ? String(decoding: pendingClose?.reason ?? [], as: UTF8.self) : reason)
        delegate?.clientDidClose(self, code: reportedCode, reason: reportedReason)
    }

    private func freeCStrings() {
        for string in cStrings { free(string) }
        cStrings = []
    }
}

@available(*, unavailable)
extension WebSocketClientConnection: Sendable {}
