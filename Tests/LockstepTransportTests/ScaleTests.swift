import Testing
@testable import LockstepTransport

// @unchecked Sendable: touched only on the client's loop thread; `recorder` is Sendable.
final class CountingClientDelegate: WebSocketClientDelegate, @unchecked Sendable {
    let recorder = Recorder()
    func clientDidConnect(_ connection: WebSocketClientConnection) { recorder.record(.opened(connection.id)) }
    func client(_ connection: WebSocketClientConnection, didReceive message: InboundMessage) {
        recorder.record(.received(connection.id, message))
    }
    func clientDidClose(_ connection: WebSocketClientConnection, code: UInt16?, reason: String) {
        recorder.record(.closed(connection.id))
    }
}

@Suite(.timeLimit(.minutes(2)))
struct ScaleTests {
    @Test func thousandClientsReceiveOneBroadcast() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        let clients = CountingClientDelegate()
        for _ in 0..<1000 {
            client.connect(to: "ws://127.0.0.1:\(server.port)/", delegate: clients)
        }
        #expect(await clients.recorder.wait(timeout: 60) { $0.count == 1000 })
        #expect(await delegate.recorder.wait { $0.count == 1000 })
        server.loop.execute {
            let frame = OutboundFrame(text: "everyone")
            for connection in delegate.connections.values { connection.send(frame) }
        }
        #expect(await clients.recorder.wait(timeout: 30) { $0.count == 2000 })
        let received = clients.recorder.count {
            if case .received(_, .text(Array("everyone".utf8))) = $0 { true } else { false }
        }
        #expect(received == 1000)
        #expect(clients.recorder.count { if case .closed = $0 { true } else { false } } == 0)
    }
}
