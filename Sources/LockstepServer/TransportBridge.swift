import LockstepTransport
import Synchronization

/// Forwards the transport's callbacks, which arrive on the loop thread, into the ``SyncServer`` actor.
///
/// The actor's executor is that same loop, so `assumeIsolated` holds and no hop is needed.
final class TransportBridge: WebSocketServerDelegate, Sendable {
    /// Set once the actor exists; the transport may call in before that, and is refused until then.
    private let server = Mutex<SyncServer?>(nil)

    func attach(_ server: SyncServer) {
        self.server.withLock { $0 = server }
    }

    private var current: SyncServer? { server.withLock { $0 } }

    func shouldAccept(_ request: UpgradeRequest) -> Bool {
        current?.assumeIsolated { $0.accepts(request) } ?? false
    }

    func connectionDidOpen(_ connection: WebSocketConnection) {
        current?.assumeIsolated { $0.open(connection) }
    }

    func connection(_ connection: WebSocketConnection, didReceive message: InboundMessage) {
        current?.assumeIsolated { $0.receive(message, from: connection) }
    }

    func connectionDidDrain(_ connection: WebSocketConnection) {
        current?.assumeIsolated { $0.drained(connection) }
    }

    func connectionDidClose(_ connection: WebSocketConnection) {
        current?.assumeIsolated { $0.close(connection) }
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        current?.assumeIsolated { $0.respond(to: request) } ?? .text(503, "starting\n")
    }
}
