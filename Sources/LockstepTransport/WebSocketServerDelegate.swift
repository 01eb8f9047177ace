/// The owner of a `WebSocketServer`'s connections. Every call arrives on the server's loop thread, so an actor
/// isolated to `server.loop` can use `assumeIsolated` inside these methods.
public protocol WebSocketServerDelegate: AnyObject {
    /// Decides whether a handshake may proceed (e.g. paths, connection caps): nil accepts it; a response refuses it,
    /// is sent as an HTTP/1.1 answer, and the connection closes.
    func refusal(of request: UpgradeRequest) -> HTTPResponse?
    /// A connection finished its handshake and can send.
    func connectionDidOpen(_ connection: WebSocketConnection)
    /// One whole message arrived.
    func connection(_ connection: WebSocketConnection, didReceive message: InboundMessage)
    /// Once after `notifyWhenDrained()`: everything queued has been handed to the socket (after `discardQueue`:
    /// the peer has taken what libwebsockets still held). Not called otherwise, so writes cost no callback.
    func connectionDidDrain(_ connection: WebSocketConnection)
    /// The connection fell more than its stream's `lagLimit` behind and no longer follows it; what it missed is
    /// gone. The owner decides how it catches up (Lockstep sends a fresh snapshot).
    func connectionDidFallBehind(_ connection: WebSocketConnection)
    /// The connection is gone, whoever closed it; called exactly once per opened connection.
    func connectionDidClose(_ connection: WebSocketConnection)
    /// Answers a plain HTTP request on the same port.
    func respond(to request: HTTPRequest) -> HTTPResponse
    /// Called after the loop drained work submitted from other threads, so owners can flush batched output.
    func loopDidWake()
    /// Accepting a connection failed for want of a file descriptor (`errno` is `EMFILE` for this process's limit,
    /// `ENFILE` for the system's); the `refused` connections that were waiting have been closed. Existing
    /// connections are untouched; accepting resumes by itself once descriptors come free.
    func descriptorsRanOut(errno: Int32, refused: Int)
}

extension WebSocketServerDelegate {
    /// By default nothing happens after a wake.
    public func loopDidWake() {}

    /// By default running out of descriptors is not reported.
    public func descriptorsRanOut(errno: Int32, refused: Int) {}

    /// By default a connection that fell behind is closed (1008), since it can no longer be kept consistent.
    public func connectionDidFallBehind(_ connection: WebSocketConnection) {
        connection.close(code: 1008, reason: "fell too far behind")
    }
}
