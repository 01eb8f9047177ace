import Testing
@testable import LockstepTransport

/// The pattern the server module uses: an actor whose executor is the transport's loop.
actor LoopActor {
    let loop: ServiceLoop
    var touches = 0

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    init(loop: ServiceLoop) { self.loop = loop }

    func runsOnLoop() -> Bool {
        loop.isCurrent
    }

    func touch() { touches += 1 }
}

// @unchecked Sendable: `actor` is Sendable and set before the server starts; callbacks run on the loop thread.
final class ActorDelegate: WebSocketServerDelegate, @unchecked Sendable {
    var actor: LoopActor?
    let recorder = Recorder()

    func refusal(of request: UpgradeRequest) -> HTTPResponse? { nil }
    func connectionDidOpen(_ connection: WebSocketConnection) {
        actor?.assumeIsolated { $0.touch() }
        recorder.record(.opened(connection.id))
    }
    func connection(_ connection: WebSocketConnection, didReceive message: InboundMessage) {}
    func connectionDidDrain(_ connection: WebSocketConnection) {}
    func connectionDidClose(_ connection: WebSocketConnection) {}
    func respond(to request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 404) }
    func loopDidWake() {
        actor?.assumeIsolated { $0.touch() }
    }
}

// Three minutes: each test's waits are bounded by `withTimeout`'s minute, on a loaded machine.
@Suite(.timeLimit(.minutes(3)))
struct ServiceLoopTests {
    @Test func actorIsolatedToLoopRunsOnLoopAndAssumeIsolatedWorks() async throws {
        let delegate = ActorDelegate()
        let server = try WebSocketServer(configuration: .init(port: 0), delegate: delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        let actor = LoopActor(loop: server.loop)
        await withCheckedContinuation { continuation in
            server.loop.execute {
                delegate.actor = actor
                continuation.resume()
            }
        }
        #expect(await actor.runsOnLoop())
        #expect(!server.loop.isCurrent)
        try await withTimeout {
            _ = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            #expect(await delegate.recorder.wait { $0.contains(.opened(1)) })
        }
        #expect(await actor.touches >= 1)
    }

    @Test func executeRunsInOrderOnTheLoop() async throws {
        let client = try WebSocketClient()
        defer { client.shutdown() }
        let recorder = Recorder()
        let loop = client.loop
        for index in 0..<100 {
            loop.execute { recorder.record(.opened(loop.isCurrent ? UInt64(index) : 9999)) }
        }
        #expect(await recorder.wait { $0.count == 100 })
        #expect(recorder.events == (0..<100).map { .opened(UInt64($0)) })
    }

    @Test func workAfterShutdownStillRuns() async throws {
        let client = try WebSocketClient()
        client.shutdown()
        let recorder = Recorder()
        let loop = client.loop
        loop.execute { recorder.record(.opened(loop.isCurrent ? 1 : 0)) }
        #expect(await recorder.wait { $0 == [.opened(1)] })
    }
}
