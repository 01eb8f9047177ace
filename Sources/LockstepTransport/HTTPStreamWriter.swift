internal import CLibWebSockets

/// Writes an ``HTTPBodyStream`` as HTTP/1.1 chunks, one writeable callback at a time. Loop-bound.
enum HTTPStreamWriter {
    /// Writes the next chunk of `exchange`'s stream; returns what the callback returns (-1 closes the connection).
    static func write(_ exchange: HTTPExchange, stream: HTTPBodyStream, wsi: OpaquePointer, server: WebSocketServer)
        -> (result: Int32, done: Bool)
    {
        keepAlive(wsi, server: server)
        var finished = false
        while exchange.offset == exchange.body.count && !finished {
            switch stream.next() {
            case .bytes(let bytes):
                guard !bytes.isEmpty else { continue }
                exchange.body = Array("\(String(bytes.count, radix: 16))\r\n".utf8) + bytes + [13, 10]
                exchange.offset = 0
            case .end:
                exchange.body = Array("0\r\n\r\n".utf8)
                exchange.offset = 0
                finished = true
            case .failed:
                return (-1, true)
            }
        }
        let chunk = min(exchange.body.count - exchange.offset, server.configuration.coalesceBytes)
        let base = server.writeBuffer + CLibWebSockets_LWS_PRE
        exchange.body.withUnsafeBytes { bytes in
            base.copyMemory(from: bytes.baseAddress! + exchange.offset, byteCount: chunk)
        }
        exchange.offset += chunk
        let isLast = finished && exchange.offset == exchange.body.count
        let written = lws_write(
            wsi, base.assumingMemoryBound(to: UInt8.self), chunk, isLast ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP
        )
        if written < 0 { return (-1, true) }
        keepAlive(wsi, server: server)
        return (0, isLast)
    }

    /// Gives the exchange another request timeout from now: a stream may take longer than that in all (its
    /// producer's first piece included) and stays open as long as it makes progress.
    static func keepAlive(_ wsi: OpaquePointer, server: WebSocketServer) {
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(server.configuration.handshakeTimeoutSeconds))
    }
}
