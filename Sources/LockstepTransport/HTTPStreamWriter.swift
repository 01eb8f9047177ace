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
        let written = lws_write(
            wsi, base.assumingMemoryBound(to: UInt8.self), chunk, isLast ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP
        )
        if written < 0 { return .failed }
        keepAlive(wsi, server: server)
        return isLast ? .finished : .more
    }

    /// Gives the exchange another request timeout from now: a stream may take longer than that in all (its
    /// producer's first piece included) and stays open as long as it makes progress.
    static func keepAlive(_ wsi: OpaquePointer, server: WebSocketServer) {
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(server.configuration.handshakeTimeoutSeconds))
    }
}
