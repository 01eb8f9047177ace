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

    init(wsi: OpaquePointer, path: String) {
        self.wsi = wsi
        method = HeaderAccess.path(wsi).method
        self.path = path
        query = HeaderAccess.query(wsi)
    }

    /// Any request header by case-insensitive name; nil once `respond(to:)` has returned.
    public func header(_ name: String) -> String? {
        guard let wsi else { return nil }
        return HeaderAccess.header(wsi, named: name)
    }

    func invalidate() { wsi = nil }
}

@available(*, unavailable)
extension HTTPRequest: Sendable {}
