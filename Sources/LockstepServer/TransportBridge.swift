import LockstepTransport
import Synchronization

/// Forwards the transport's callbacks, which arrive on the loop thread, into the ``SyncServer`` actor.
///
/// The actor's executor is that same loop, so `assumeIsolated` holds and no hop is needed. The bridge
/// also keeps the per-address connection count, since it sees every open and close, sessions or not.
final class TransportBridge: WebSocketServerDelegate, Sendable {
    /// Set once the actor exists; the transport may call in before that, and is refused until then.
    private let server = Mutex<SyncServer?>(nil)
    /// Touched only on the loop thread; the Mutex is what makes the bridge Sendable, never contended.
    private let perAddress = Mutex(ConnectionsPerAddress())

    func attach(_ server: SyncServer) {
        self.server.withLock { $0 = server }
    }

    private var current: SyncServer? { server.withLock { $0 } }

    func refusal(of request: UpgradeRequest) -> HTTPResponse? {
        guard let server = current else { return HTTPResponse(status: 503, text: "the server is starting\n") }
        let limit = server.configuration.maxConnectionsPerAddress
        guard perAddress.withLock({ $0.allows(request.peerAddress, limit: limit) }) else {
            let text = "too many connections from \(request.peerAddress) (limit \(limit))\n"
            return HTTPResponse(status: 503, text: text)
        }
        let request = OnLoop(request)
        return server.assumeIsolated { $0.refusal(of: request.value) }
    }

    func connectionDidOpen(_ connection: WebSocketConnection) {
        perAddress.withLock { $0.opened(connection.peerAddress) }
        let connection = OnLoop(connection)
        current?.assumeIsolated { $0.open(connection.value) }
    }

    func connection(_ connection: WebSocketConnection, didReceive message: InboundMessage) {
        let connection = OnLoop(connection)
        current?.assumeIsolated { $0.receive(message, from: connection.value) }
    }

    func connectionDidDrain(_ connection: WebSocketConnection) {
        let connection = OnLoop(connection)
        current?.assumeIsolated { $0.drained(connection.value) }
    }

    func connectionDidFallBehind(_ connection: WebSocketConnection) {
        let connection = OnLoop(connection)
        current?.assumeIsolated { $0.fellBehind(connection.value) }
    }

    func connectionDidClose(_ connection: WebSocketConnection) {
        perAddress.withLock { $0.closed(connection.peerAddress) }
        let connection = OnLoop(connection)
        current?.assumeIsolated { $0.close(connection.value) }
    }

    func descriptorsRanOut(errno: Int32, refused: Int) {
        current?.assumeIsolated { $0.descriptorsRanOut(errno: errno, refused: refused) }
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let request = OnLoop(request)
        return current?.assumeIsolated { $0.respond(to: request.value) }
            ?? HTTPResponse(status: 503, text: "starting\n")
    }
}

/// Carries a loop-bound value from a transport callback into the actor that lives on that loop.
///
/// `@unchecked Sendable` is sound here: the value never leaves the loop thread. The callback runs
/// on the loop, and `assumeIsolated` traps unless the actor's executor is that same loop, so the
/// value is used on the thread that owns it and nowhere else.
private struct OnLoop<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
