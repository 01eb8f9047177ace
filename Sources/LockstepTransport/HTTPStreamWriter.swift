internal import CLibWebSockets

/// Writes an ``HTTPBodyStream`` as HTTP/1.1 chunks, one writeable callback at a time. Loop-bound.
enum HTTPStreamWriter {
    /// What a writeable callback did with a stream.
    enum Outcome {
        /// Wrote a chunk; more follows.
        case more
        /// The producer has nothing yet: no write until it calls `resume()`.
        case waiting
        /// Wrote the final chunk.
        case finished
        /// The body cannot be completed, or the socket failed: the connection closes.
        case failed
    }

    /// Writes the next chunk of `exchange`'s stream.
    static func write(_ exchange: HTTPExchange, stream: HTTPBodyStream, wsi: OpaquePointer, server: WebSocketServer)
        -> Outcome
    {
        keepAlive(wsi, server: server)
        var finished = false
        while exchange.offset == exchange.body.count && !finished {
            let piece = exchange.streamEnding ?? stream.next()
            exchange.streamEnding = nil
            switch piece {
            case .bytes(let bytes):
                guard !bytes.isEmpty else { continue }
                exchange.body = chunk(bytes)
                exchange.offset = 0
            case .end:
                exchange.body = Array("0\r\n\r\n".utf8)
                exchange.offset = 0
                finished = true
            case .failed:
                return .failed
            case .later:
                stream.waitingWsi = wsi
                exchange.pause(wsi, server: server)
                // An open-ended body waits for events, not for work in progress: it keeps itself alive.
                if stream.isOpenEnded { lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0) }
                return .waiting
            }
        }
        let chunk = min(exchange.body.count - exchange.offset, server.configuration.coalesceBytes)
        let base = server.writeBuffer + CLibWebSockets_LWS_PRE
        exchange.body.withUnsafeBytes { bytes in
            base.copyMemory(from: bytes.baseAddress! + exchange.offset, byteCount: chunk)
        }
        exchange.offset += chunk
        let isLast = finished && exchange.offset == exchange.body.count
        let written = server.send(
            wsi, base.assumingMemoryBound(to: UInt8.self), chunk, isLast ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP
        )
        if written < 0 { return .failed }
        keepAlive(wsi, server: server)
        return isLast ? .finished : .more
    }

    /// Writes what a waiting stream has now, at the end of a pass in which it was resumed, outside a callback: every
    /// piece up to its next `.later`, as chunks in one send. A socket that holds data back, TLS, a body that ends
    /// or more than the write buffer takes go back to the writeable callbacks (`HTTPExchange.proceed`), which write
    /// the rest. Loop thread.
    static func flush(_ stream: HTTPBodyStream, server: WebSocketServer) {
        stream.flushScheduled = false
        guard let wsi = stream.waitingWsi, let exchange = exchange(of: wsi), exchange.stream === stream else { return }
        stream.waitingWsi = nil
        guard lws_is_ssl(wsi) == 0, lws_partial_buffered(wsi) == 0 else {
            return HTTPExchange.proceed(wsi, server: server)
        }
        let capacity = server.configuration.coalesceBytes
        let base = (server.writeBuffer + CLibWebSockets_LWS_PRE).assumingMemoryBound(to: UInt8.self)
        var length = 0
        func put(_ part: [UInt8]) {
            part.withUnsafeBufferPointer { (base + length).update(from: $0.baseAddress!, count: $0.count) }
            length += part.count
        }
        var waits = false
        gathering: while true {
            switch stream.next() {
            case .bytes(let bytes):
                guard !bytes.isEmpty else { continue }
                guard length + sizeLineBytes(bytes.count) + bytes.count + 2 <= capacity else {
                    // The writeable callback writes it, after what is gathered.
                    exchange.body = chunk(bytes)
                    exchange.offset = 0
                    break gathering
                }
                length += putSizeLine(bytes.count, at: base + length)
                put(bytes)
                put([13, 10])
            case .later:
                waits = true
                break gathering
            case let ending:
                exchange.streamEnding = ending
                break gathering
            }
        }
        if length > 0, server.send(wsi, base, length, LWS_WRITE_HTTP) < 0 {
            return lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        }
        // What the socket did not take, lws holds and writes as it drains; a body paused meanwhile would not be
        // served (reading is off), so the writeable callbacks take over until lws holds nothing, as before.
        guard waits, lws_partial_buffered(wsi) == 0 else { return HTTPExchange.proceed(wsi, server: server) }
        stream.waitingWsi = wsi
        // Reading stays paused, as after any `.later`; a body that is not open-ended waits anew for its producer.
        if !stream.isOpenEnded {
            lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(server.configuration.responseWaitTimeoutSeconds))
        }
    }

    /// `bytes` as one chunk: its size line, the bytes, CRLF.
    private static func chunk(_ bytes: [UInt8]) -> [UInt8] {
        let sizeLine = [UInt8](unsafeUninitializedCapacity: sizeLineBytes(bytes.count)) { buffer, initialized in
            initialized = putSizeLine(bytes.count, at: buffer.baseAddress!)
        }
        return sizeLine + bytes + [13, 10]
    }

    /// The length of `count`'s size line.
    private static func sizeLineBytes(_ count: Int) -> Int {
        (Int.bitWidth - max(count, 1).leadingZeroBitCount + 3) / 4 + 2
    }

    /// Writes `count`'s size line at `target`, without building a string (a chunk of every follower has one); returns
    /// its length.
    private static func putSizeLine(_ count: Int, at target: UnsafeMutablePointer<UInt8>) -> Int {
        let length = sizeLineBytes(count)
        var rest = count
        for index in stride(from: length - 3, through: 0, by: -1) {
            let digit = UInt8(rest & 0xF)
            target[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
            rest >>= 4
        }
        target[length - 2] = 13
        target[length - 1] = 10
        return length
    }

    /// Gives the exchange another request timeout from now: a stream may take longer than that in all (its
    /// producer's first piece included) and stays open as long as it makes progress.
    static func keepAlive(_ wsi: OpaquePointer, server: WebSocketServer) {
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(server.configuration.handshakeTimeoutSeconds))
    }
}
