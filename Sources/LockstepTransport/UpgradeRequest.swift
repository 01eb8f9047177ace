/// A WebSocket handshake awaiting a decision, so the owner can enforce caps or authentication before any
/// per-connection state exists. Loop-bound; valid only during `refusal(of:)`.
public final class UpgradeRequest {
    private var wsi: OpaquePointer?

    /// The request path, without the query.
    public let path: String
    /// URL-decoded query arguments; the first value of a repeated name wins.
    public let query: [String: String]
    /// The peer's numeric address.
    public let peerAddress: String

    init(wsi: OpaquePointer) {
        self.wsi = wsi
        path = HeaderAccess.path(wsi).path
        query = HeaderAccess.query(wsi)
        peerAddress = HeaderAccess.peer(wsi)
    }

    /// Any request header by case-insensitive name; nil once `refusal(of:)` has returned.
    public func header(_ name: String) -> String? {
        guard let wsi else { return nil }
        return HeaderAccess.header(wsi, named: name)
    }

    func invalidate() { wsi = nil }
}

@available(*, unavailable)
extension UpgradeRequest: Sendable {}
