internal import CLibWebSockets

/// A plain HTTP request on the WebSocket port, so health checks and metrics need no second listener.
/// Loop-bound; `header(_:)` answers only during `respond(to:)`.
public final class HTTPRequest {
    private var wsi: OpaquePointer?

    /// The method, e.g. "GET".
    public let method: String
    /// The request path, without the query.
    public let path: String
    /// URL-decoded query arguments; the first value of a repeated name wins.
    public let query: [String: String]
    /// The request's body (a `POST`'s), at most the server's `maxMessageBytes`; empty for a request without one.
    public internal(set) var body: [UInt8] = []
    /// The body was longer than `maxMessageBytes`: `body` holds none of it (the request is answered at its head).
    public internal(set) var bodyIsTooLarge = false

    init(wsi: OpaquePointer, path: String) {
        self.wsi = wsi
        method = HeaderAccess.method(wsi)
        self.path = path
        query = HeaderAccess.query(wsi)
    }

    /// Any request header by case-insensitive name; nil once `respond(to:)` has returned.
    public func header(_ name: String) -> String? {
        guard let wsi else { return nil }
        return HeaderAccess.header(wsi, named: name)
    }

    func invalidate() { wsi = nil }

    /// The length of the body that follows the head, by its `Content-Length` (any method's: libwebsockets reads it
    /// whatever the method); 0 for none.
    var declaredBodyLength: Int {
        guard let wsi, let value = HeaderAccess.token(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) else { return 0 }
        return MalformedRequest.bodyLength(value) ?? 0
    }

    /// Adds a piece of the body as it arrives: at most the `Content-Length`, which is within the limit.
    func receive(_ piece: UnsafeRawBufferPointer) {
        body.append(contentsOf: piece)
    }
}

@available(*, unavailable)
extension HTTPRequest: Sendable {}
