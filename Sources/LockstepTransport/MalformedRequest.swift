internal import CLibWebSockets

/// What makes a request that libwebsockets parsed anyway unfit to answer: its parser is lenient and its reading of
/// bodies narrow, so these are caught before the owner sees the request, answered with HTTP 400 (411 for a body
/// without a length), and the connection closed: what follows on it cannot be trusted to start a request.
///
/// libwebsockets ends the path at the first space and keeps the rest of the request line as the version
/// (`GET /rooms/a b HTTP/1.1` reads as path `/rooms/a`, version `b HTTP/1.1`), and takes a percent-encoded line break
/// (`%0A`, `%0D`) for the end of the request line, so the version is missing and the next header is swallowed.
enum MalformedRequest: Equatable {
    /// The request line is not `METHOD /PATH HTTP/1.x`: a raw space or an encoded line break in the target.
    case requestLine(version: String?)
    /// A WebSocket handshake must be HTTP/1.1 or later (RFC 6455 §4.1).
    case upgradeVersion(String)
    /// A WebSocket handshake without a `Host` or `Sec-WebSocket-Key` header.
    case missingHeader(String)
    /// A `Content-Length` that is not one number (RFC 9112 §6.3): libwebsockets would read a wrong body length and
    /// take the rest of the body for the next request.
    case contentLength(String)
    /// A body without a `Content-Length`: in chunks (`Transfer-Encoding`), which libwebsockets does not decode, or a
    /// `POST`, `PUT` or `PATCH` without either, whose body it would read until the connection closes.
    case lengthRequired
    /// A request with a body sent before the answer to the request ahead of it (``checkBodyStart(_:method:)``).
    case pipelinedBody

    /// Why the request whose headers `wsi` holds must be refused, or nil when it is well formed.
    static func check(_ wsi: OpaquePointer, upgrade: Bool) -> MalformedRequest? {
        let version = HeaderAccess.token(wsi, WSI_TOKEN_HTTP)
        guard let version, version == "HTTP/1.1" || version == "HTTP/1.0" else { return .requestLine(version: version) }
        guard upgrade else { return nil }
        if version != "HTTP/1.1" { return .upgradeVersion(version) }
        if HeaderAccess.token(wsi, WSI_TOKEN_HOST) == nil { return .missingHeader("Host") }
        if HeaderAccess.token(wsi, WSI_TOKEN_KEY) == nil { return .missingHeader("Sec-WebSocket-Key") }
        return nil
    }

    /// Why the body of the plain HTTP request whose head `wsi` holds cannot be read, or nil when it can (or there is
    /// none).
    static func checkBody(_ wsi: OpaquePointer) -> MalformedRequest? {
        if HeaderAccess.header(wsi, named: "transfer-encoding") != nil { return .lengthRequired }
        guard let declared = HeaderAccess.token(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) else {
            return ["POST", "PUT", "PATCH"].contains(HeaderAccess.method(wsi)) ? .lengthRequired : nil
        }
        // Repeated, the header's values arrive joined by commas: "5,5" is refused like "abc".
        return bodyLength(declared) == nil ? .contentLength(declared) : nil
    }

    /// Why a request whose body begins with `first` (its first piece) must be refused, or nil when it may go on.
    ///
    /// libwebsockets 4.1 keeps what one read brought past a request in a buffer of the connection and parses the next
    /// request from there. For a request with a body it then reads that buffer once more from its start as the body,
    /// the request's own head first, and once the answer ends the transaction it loops forever on the bytes left
    /// (`lws_http_action`, lib/roles/http/server/server.c, 4.1.6). So a body that starts as its head does (the method
    /// and a space, or as much of them as the piece holds) was sent before the answer to the request ahead of it, and
    /// is refused before it is answered. No JSON text starts so.
    static func checkBodyStart(_ first: UnsafeRawBufferPointer, method: String) -> MalformedRequest? {
        let head = Array(method.utf8) + [32]
        let count = min(first.count, head.count)
        return count > 0 && first.prefix(count).elementsEqual(head.prefix(count)) ? .pipelinedBody : nil
    }

    /// The number a `Content-Length` value states: digits only, around them at most spaces and tabs, and small
    /// enough to add to.
    static func bodyLength(_ value: String) -> Int? {
        var length = 0
        var digits = 0
        var ended = false
        for byte in value.utf8 {
            switch byte {
            case 48...57 where !ended && digits < 18:
                length = length * 10 + Int(byte - 48)
                digits += 1
            case 32, 9:
                ended = digits > 0
            default:
                return nil
            }
        }
        return digits > 0 ? length : nil
    }

    /// What the client must change, as the body of the 400 answer.
    var message: String {
        switch self {
        case .requestLine:
            "malformed request line: send METHOD /PATH HTTP/1.1, with spaces and control characters in the path "
                + "and query percent-encoded (%20) and no encoded line breaks (%0A, %0D)\n"
        case .upgradeVersion(let version):
            "a WebSocket handshake needs HTTP/1.1, not \(version)\n"
        case .missingHeader(let name):
            "a WebSocket handshake needs a \(name) header\n"
        case .contentLength(let value):
            "Content-Length must be one number of bytes, not '\(value.prefix(40))'\n"
        case .lengthRequired:
            "send a request's body with a Content-Length header (not in chunks with Transfer-Encoding)\n"
        case .pipelinedBody:
            "a request with a body must wait for the answer to the request before it on the same connection "
                + "(HTTP pipelining is for requests without a body); send it again\n"
        }
    }

    /// The HTTP answer.
    var response: HTTPResponse { HTTPResponse(status: self == .lengthRequired ? 411 : 400, text: message) }
}
