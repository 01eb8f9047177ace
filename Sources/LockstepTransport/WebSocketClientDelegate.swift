/// The owner of outgoing connections. Every call arrives on the client's loop thread.
public protocol WebSocketClientDelegate: AnyObject {
    /// The handshake succeeded; the connection can send.
    func clientDidConnect(_ connection: WebSocketClientConnection)
    /// One whole message arrived.
    func client(_ connection: WebSocketClientConnection, didReceive message: InboundMessage)
    /// One whole text message arrived, lent for the duration of the call: implement it to read messages in place
    /// (a load generator reading a million a second); by default it is copied and passed to `didReceive`.
    func client(_ connection: WebSocketClientConnection, didReceiveText bytes: UnsafeRawBufferPointer)
    /// Bytes of one socket read are about to arrive as messages: a delegate that timestamps what it receives can
    /// read its clock once per read, since everything in one read was there when it was read. Does nothing by
    /// default.
    func clientWillRead(_ connection: WebSocketClientConnection)
    /// The connection ended, or never opened. `code` is the close code the server sent (or, for a close we
    /// initiated, the code we sent); nil when there was no close frame, e.g. a refused connect.
    func clientDidClose(_ connection: WebSocketClientConnection, code: UInt16?, reason: String)
}

extension WebSocketClientDelegate {
    public func client(_ connection: WebSocketClientConnection, didReceiveText bytes: UnsafeRawBufferPointer) {
        client(connection, didReceive: .text(Array(bytes)))
    }

    public func clientWillRead(_ connection: WebSocketClientConnection) {}
}
