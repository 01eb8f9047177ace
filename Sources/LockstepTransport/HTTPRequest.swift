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
    /// The body was longer than `maxMessageBytes`: `body` holds none of it.
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

    /// Whether a body follows the head: a `POST`, `PUT` or `PATCH` with a `Content-Length` above 0.
    var expectsBody: Bool {
        guard ["POST", "PUT", "PATCH"].contains(method), let wsi,
            let length = HeaderAccess.header(wsi, named: "content-length").flatMap(Int.init)
        else { return false }
        return length > 0
    }

    /// Adds a piece of the body as it arrives, keeping none of it past `limit` bytes.
    func receive(_ piece: UnsafeRawBufferPointer, limit: Int) {
        guard !bodyIsTooLarge else { return }
        guard body.count + piece.count <= limit else {
            bodyIsTooLarge = true
            body = []
            return
        }
        body.append(contentsOf: piece)
    }
}

@available(*, unavailable)
extension HTTPRequest: Sendable {}
