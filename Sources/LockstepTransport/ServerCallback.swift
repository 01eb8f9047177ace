internal import CLibWebSockets

/// The protocol callback of every server context: finds the `WebSocketServer` through `lws_context_user` and the
/// connection through the per-session data, then dispatches. Runs on the loop thread.
func serverCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi else { return 0 }
    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        server(of: wsi).loop.drainInbox()
        return 0

    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        let server = server(of: wsi)
        let refusal: HTTPResponse?
        if let malformed = MalformedRequest.check(wsi, upgrade: true) {
            refusal = malformed.response
        } else {
            let request = UpgradeRequest(wsi: wsi)
            refusal = server.delegate.refusal(of: request)
            request.invalidate()
        }
        guard let refusal else { return 0 }
        refuse(wsi, with: refusal, server: server)
        // Nonzero closes the connection once the answer is written.
        return -1

    case LWS_CALLBACK_ESTABLISHED:
        guard let user else { return -1 }
        let server = server(of: wsi)
        let connection = WebSocketConnection(
            id: server.nextID, wsi: wsi, server: server, deflate: server.deflateAgreement(wsi))
        server.nextID += 1
        server.connections[connection.id] = connection
        user.storeBytes(of: Unmanaged.passUnretained(connection).toOpaque(), as: UnsafeMutableRawPointer?.self)
        server.delegate.connectionDidOpen(connection)
        return 0

    case LWS_CALLBACK_CONFIRM_EXTENSION_OKAY:
        // Nonzero declines: the client gets plain frames.
        return server(of: wsi).deflateAgreement(wsi) == nil ? 1 : 0

    case LWS_CALLBACK_ADD_HEADERS:
        guard let agreement = server(of: wsi).deflateAgreement(wsi), let input else { return 0 }
        return appendDeflateParameters(agreement, to: input.assumingMemoryBound(to: lws_process_html_args.self))

    case LWS_CALLBACK_RECEIVE:
        connection(in: user)?.handleReceive(input, length)
        return 0

    case LWS_CALLBACK_SERVER_WRITEABLE:
        return connection(in: user)?.handleWriteable() ?? -1

    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        // Returning 0 lets lws echo the close; CLOSED follows.
        return 0

    case LWS_CALLBACK_CLOSED:
        if let connection = connection(in: user) {
            user?.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            connection.handleClosed()
        }
        return 0

    case LWS_CALLBACK_HTTP:
        server(of: wsi).receivedInPass = true
        return handleHTTP(wsi, user, input)

    case LWS_CALLBACK_HTTP_BODY:
        server(of: wsi).receivedInPass = true
        guard let request = receivingRequest(in: user), let input else { return -1 }
        let piece = UnsafeRawBufferPointer(start: input, count: length)
        if request.body.isEmpty, let malformed = MalformedRequest.checkBodyStart(piece, method: request.method) {
            refuse(wsi, with: malformed.response, server: server(of: wsi))
            return -1
        }
        request.receive(piece)
        return 0

    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        guard let request = receivingRequest(in: user) else { return -1 }
        releaseExchange(user)
        setBodyWait(user, to: .settled)
        return respond(to: request, wsi, user, server: server(of: wsi))

    case LWS_CALLBACK_WSI_DESTROY:
        server(of: wsi).bodiesAwaited.remove(wsi)
        return 0

    case LWS_CALLBACK_TIMER:
        // Armed when a head announced a body: one still arriving has taken longer than the head may.
        switch slot(.bodyWait, of: user).flatMap({ BodyWait(rawValue: $0.load(as: Int.self)) }) ?? .settled {
        case .settled:
            return 0
        case .receiving:
            let server = server(of: wsi)
            let message = BodyWait.timeoutMessage(seconds: server.configuration.handshakeTimeoutSeconds)
            refuse(wsi, with: HTTPResponse(status: 408, text: message), server: server)
            return -1
        case .discarding:
            return -1
        }

    case LWS_CALLBACK_HTTP_WRITEABLE:
        return writeHTTPBody(wsi, user)

    case LWS_CALLBACK_CLOSED_HTTP:
        releaseExchange(user)
        return 0

    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}

/// Answers a refused handshake (or a malformed request) with a whole HTTP/1.1 response in one write (status line,
/// headers, body), so a client sees the status and reason, never a bare 503 or a reset. The answer is small: the
/// socket takes it at once.
private func refuse(_ wsi: OpaquePointer, with response: HTTPResponse, server: WebSocketServer) {
    // The write buffer holds the whole answer; a refusal's body is a line or two, so the cut never shows in practice.
    let body = response.body.prefix(server.configuration.coalesceBytes / 2)
    var head = "HTTP/1.1 \(response.status) \(HTTPResponse.reasonPhrase(response.status))\r\n"
    head += "Content-Type: \(response.contentType)\r\nContent-Length: \(body.count)\r\n"
    for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
    head += "Connection: close\r\n\r\n"
    let bytes = Array(head.utf8.prefix(server.configuration.coalesceBytes / 2)) + body
    let base = server.writeBuffer + CLibWebSockets_LWS_PRE
    bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    _ = server.send(wsi, base.assumingMemoryBound(to: UInt8.self), bytes.count, LWS_WRITE_HTTP)
}

/// Completes the handshake answer's `Sec-WebSocket-Extensions: permessage-deflate` line, which libwebsockets wrote
/// without parameters just before the headers a callback may add (lib/roles/ws/server-ws.c `handshake_0405`, 4.1.6):
/// the line is reopened and `server_no_context_takeover` (and what else was agreed) appended. Anything else there
/// fails the handshake rather than send compressed frames unannounced.
private func appendDeflateParameters(
    _ agreement: DeflateNegotiation, to args: UnsafeMutablePointer<lws_process_html_args>
) -> Int32 {
    let written = Array("Sec-WebSocket-Extensions: permessage-deflate\r\n".utf8)
    let line = Array((agreement.responseParameters + "\r\n").utf8)
    guard let end = args.pointee.p, Int(args.pointee.max_len) > line.count else { return 1 }
    let start = UnsafeMutableRawPointer(end) - written.count
    guard UnsafeRawBufferPointer(start: start, count: written.count).elementsEqual(written) else { return 1 }
    let cursor = UnsafeMutableRawPointer(end) - 2
    line.withUnsafeBytes { cursor.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    args.pointee.p = end + (line.count - 2)
    args.pointee.max_len -= Int32(line.count - 2)
    return 0
}

private func server(of wsi: OpaquePointer) -> WebSocketServer {
    Unmanaged<WebSocketServer>.fromOpaque(lws_context_user(lws_get_context(wsi))).takeUnretainedValue()
}

private func connection(in user: UnsafeMutableRawPointer?) -> WebSocketConnection? {
    guard let pointer = user?.load(as: UnsafeMutableRawPointer?.self) else { return nil }
    return Unmanaged<WebSocketConnection>.fromOpaque(pointer).takeUnretainedValue()
}

/// The per-session data of every connection, one pointer-sized slot each.
enum SessionSlot: Int, CaseIterable {
    /// The `WebSocketConnection`, unretained: `connections` owns it.
    case connection
    /// An `HTTPExchange`, retained.
    case exchange
    /// Its `BodyWait`.
    case bodyWait
}

private func slot(_ slot: SessionSlot, of user: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    user.map { $0 + slot.rawValue * MemoryLayout<UnsafeMutableRawPointer?>.size }
}

private func exchangeSlot(_ user: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? { slot(.exchange, of: user) }

private func setBodyWait(_ user: UnsafeMutableRawPointer?, to wait: BodyWait) {
    slot(.bodyWait, of: user)?.storeBytes(of: wait.rawValue, as: Int.self)
}

private func releaseExchange(_ user: UnsafeMutableRawPointer?) {
    guard let slot = exchangeSlot(user), let pointer = slot.load(as: UnsafeMutableRawPointer?.self) else { return }
    slot.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
    let exchange = Unmanaged<HTTPExchange>.fromOpaque(pointer).takeRetainedValue()
    // A producer may still hold the promise or the stream: neither may keep the wsi.
    exchange.promise?.detach()
    exchange.stream?.release()
}

/// Arms the deadline of each body announced in this pass that has not all arrived by its end (`BodyWait`). Most
/// arrive with their head, in the same read, and need none: arming one puts the connection in libwebsockets' sorted
/// list of timers, walked on every insert.
func armBodyDeadlines(_ server: WebSocketServer) {
    let awaited = server.bodiesAwaited
    server.bodiesAwaited = []
    let microseconds = lws_usec_t(server.configuration.handshakeTimeoutSeconds) * 1_000_000
    for wsi in awaited {
        guard let wait = slot(.bodyWait, of: lws_wsi_user(wsi))?.load(as: Int.self), wait != BodyWait.settled.rawValue
        else { continue }
        lws_set_timer_usecs(wsi, microseconds)
    }
}

private func storeExchange(_ exchange: HTTPExchange, in user: UnsafeMutableRawPointer?) -> Bool {
    guard let slot = exchangeSlot(user) else { return false }
    releaseExchange(user)
    slot.storeBytes(of: Unmanaged.passRetained(exchange).toOpaque(), as: UnsafeMutableRawPointer?.self)
    return true
}

private func handleHTTP(
    _ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?
)
    -> Int32
{
    let server = server(of: wsi)
    if let malformed = MalformedRequest.check(wsi, upgrade: false) ?? MalformedRequest.checkBody(wsi) {
        // Written whole, as HTTP/1.1 (libwebsockets would answer the garbled version with 1.0), then closed: what
        // follows on the connection cannot be trusted to start a request.
        refuse(wsi, with: malformed.response, server: server)
        return -1
    }
    let path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
    let request = HTTPRequest(wsi: wsi, path: path)
    let bodyLength = request.declaredBodyLength
    guard bodyLength > 0 else { return respond(to: request, wsi, user, server: server) }
    // The whole body must follow within the time the head had: lws's own timeout restarts with every piece.
    server.bodiesAwaited.insert(wsi)
    guard bodyLength <= server.configuration.maxMessageBytes else {
        // Answered at once; lws then reads the body past, and keeps the connection, unless it takes too long.
        request.bodyIsTooLarge = true
        setBodyWait(user, to: .discarding)
        return respond(to: request, wsi, user, server: server)
    }
    // The body arrives in LWS_CALLBACK_HTTP_BODY callbacks; the head stays readable until it is whole.
    setBodyWait(user, to: .receiving)
    let exchange = HTTPExchange(body: [])
    exchange.receiving = request
    return storeExchange(exchange, in: user) ? 0 : -1
}

/// Has the delegate answer a whole request (head and body), then writes or awaits that answer.
private func respond(
    to request: HTTPRequest, _ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, server: WebSocketServer
) -> Int32 {
    let response = server.delegate.respond(to: request)
    request.invalidate()
    return answer(wsi, user, with: response, isHead: request.method == "HEAD", server: server)
}

private func receivingRequest(in user: UnsafeMutableRawPointer?) -> HTTPRequest? {
    guard let pointer = exchangeSlot(user)?.load(as: UnsafeMutableRawPointer?.self) else { return nil }
    return Unmanaged<HTTPExchange>.fromOpaque(pointer).takeUnretainedValue().receiving
}

/// Writes `response`: a whole answer (head and body) in one write where it fits the write buffer, as most do;
/// else the head and as much body as fits, the rest in writeable callbacks. A stream's head is written alone and its
/// body follows in writeable callbacks; a deferred answer waits for its promise. In a callback of `wsi`, or at the end
/// of a pass for a promise answered then (`answerReady`); returns what the callback returns.
private func answer(
    _ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, with response: HTTPResponse, isHead: Bool,
    server: WebSocketServer
) -> Int32 {
    if let promise = response.promise {
        return wait(for: promise, wsi, user, isHead: isHead, server: server)
    }
    let capacity = server.configuration.coalesceBytes
    let headerSpace = min(8192, capacity)
    let start = (server.writeBuffer + CLibWebSockets_LWS_PRE).assumingMemoryBound(to: UInt8.self)
    var cursor: UnsafeMutablePointer<UInt8>? = start
    let end = start + headerSpace - 1
    // A stream has no length: UInt64.max is lws's LWS_ILLEGAL_HTTP_CONTENT_LEN (it then adds Connection: close).
    let failed = response.contentType.withCString { contentType in
        lws_add_http_common_headers(
            wsi, UInt32(response.status), contentType,
            response.stream == nil ? UInt64(response.body.count) : UInt64.max, &cursor, end)
    }
    if failed != 0 { return -1 }
    var headers = response.headers
    if response.stream != nil { headers["Transfer-Encoding"] = "chunked" }
    for (name, value) in headers {
        var cName = Array((name + ":").utf8) + [0]
        var cValue = Array(value.utf8)
        if lws_add_http_header_by_name(wsi, &cName, &cValue, Int32(cValue.count), &cursor, end) != 0 { return -1 }
    }
    if lws_finalize_http_header(wsi, &cursor, end) != 0 { return -1 }
    let headLength = cursor! - start

    if let stream = response.stream, !isHead {
        if server.send(wsi, start, headLength, LWS_WRITE_HTTP_HEADERS) < 0 { return -1 }
        guard storeExchange(HTTPExchange(body: [], stream: stream), in: user) else { return -1 }
        stream.bind(to: server, wsi: wsi)
        HTTPStreamWriter.keepAlive(wsi, server: server)
        server.requestWritable(wsi)
        return 0
    }
    // In h1 lws_write sends HTTP bytes as they are (lib/roles/h1/ops-h1.c, 4.1.6), head and body alike: one send.
    let inline = isHead ? 0 : min(response.body.count, capacity - headLength)
    response.body.withUnsafeBytes { body in
        if inline > 0 { UnsafeMutableRawPointer(cursor!).copyMemory(from: body.baseAddress!, byteCount: inline) }
    }
    let isLast = isHead || inline == response.body.count
    if server.send(wsi, start, headLength + inline, isLast ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < 0 { return -1 }
    if isLast {
        releaseExchange(user)
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }
    let exchange = HTTPExchange(body: response.body)
    exchange.offset = inline
    guard storeExchange(exchange, in: user) else { return -1 }
    server.requestWritable(wsi)
    return 0
}

/// Writes the answer `promise` got during this pass of the loop, at its end: at once, outside a callback, when the
/// socket holds nothing back (as `WebSocketConnection.flush()` does), so an answer costs no eventfd wake and no
/// writeable pass; else in the writeable callback, as before. Loop thread.
func answerReady(_ promise: HTTPPromise, server: WebSocketServer) {
    guard let wsi = promise.wsi else { return }
    let user = lws_wsi_user(wsi)
    guard let pointer = exchangeSlot(user)?.load(as: UnsafeMutableRawPointer?.self),
        Unmanaged<HTTPExchange>.fromOpaque(pointer).takeUnretainedValue().promise === promise
    else { return }
    guard lws_is_ssl(wsi) == 0, lws_partial_buffered(wsi) == 0 else { return HTTPExchange.proceed(wsi, server: server) }
    let exchange = Unmanaged<HTTPExchange>.fromOpaque(pointer).takeUnretainedValue()
    guard let response = promise.takeResponse() else { return }
    exchange.promise = nil
    lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
    lws_rx_flow_control(wsi, 1 | Int32(LWS_RXFLOW_REASON_FLAG_PROCESS_NOW))
    if answer(wsi, user, with: response, isHead: promise.isHead, server: server) != 0 {
        // Outside a callback a connection is closed by a timeout that fires at once.
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
    }
}

/// The exchange `wsi` is writing, if any. Loop thread.
func exchange(of wsi: OpaquePointer) -> HTTPExchange? {
    guard let pointer = exchangeSlot(lws_wsi_user(wsi))?.load(as: UnsafeMutableRawPointer?.self) else { return nil }
    return Unmanaged<HTTPExchange>.fromOpaque(pointer).takeUnretainedValue()
}

/// Parks the request until `promise` is completed; its writeable callback then writes the answer.
private func wait(
    for promise: HTTPPromise, _ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?, isHead: Bool,
    server: WebSocketServer
) -> Int32 {
    let (attached, ready) = promise.attach(to: wsi, server: server, isHead: isHead)
    guard attached else {
        let misuse = HTTPResponse(status: 500, text: "an HTTPPromise can answer only one request\n")
        return answer(wsi, user, with: misuse, isHead: isHead, server: server)
    }
    if ready, let response = promise.takeResponse() {
        // Answered while the request was handled (a room in memory): written now, in this callback.
        return answer(wsi, user, with: response, isHead: isHead, server: server)
    }
    let exchange = HTTPExchange(body: [])
    exchange.promise = promise
    guard storeExchange(exchange, in: user) else { return -1 }
    exchange.pause(wsi, server: server)
    return 0
}

private func writeHTTPBody(_ wsi: OpaquePointer, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let pointer = exchangeSlot(user)?.load(as: UnsafeMutableRawPointer?.self) else { return 0 }
    let server = server(of: wsi)
    let exchange = Unmanaged<HTTPExchange>.fromOpaque(pointer).takeUnretainedValue()
    if let promise = exchange.promise {
        guard let response = promise.takeResponse() else { return 0 }
        exchange.promise = nil
        return answer(wsi, user, with: response, isHead: promise.isHead, server: server)
    }
    if let stream = exchange.stream {
        // Still waiting for `resume()`: lws asked on its own.
        if stream.waitingWsi != nil { return 0 }
        switch HTTPStreamWriter.write(exchange, stream: stream, wsi: wsi, server: server) {
        case .more:
            server.requestWritable(wsi)
            return 0
        case .waiting:
            return 0
        case .failed:
            return -1
        case .finished:
            releaseExchange(user)
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        }
    }
    let chunk = min(exchange.body.count - exchange.offset, server.configuration.coalesceBytes)
    let base = server.writeBuffer + CLibWebSockets_LWS_PRE
    exchange.body.withUnsafeBytes { bytes in
        base.copyMemory(from: bytes.baseAddress! + exchange.offset, byteCount: chunk)
    }
    exchange.offset += chunk
    let isLast = exchange.offset == exchange.body.count
    let written = server.send(
        wsi, base.assumingMemoryBound(to: UInt8.self), chunk, isLast ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP
    )
    if written < 0 { return -1 }
    if !isLast {
        server.requestWritable(wsi)
        return 0
    }
    releaseExchange(user)
    return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
}
