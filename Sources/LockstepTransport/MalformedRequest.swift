internal import CLibWebSockets

/// What makes a request that libwebsockets parsed anyway unfit to answer: its parser is lenient, so these are caught
/// before the owner sees the request, and answered with HTTP 400.
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
        }
    }

    /// The HTTP answer.
    var response: HTTPResponse { HTTPResponse(status: 400, text: message) }
}
