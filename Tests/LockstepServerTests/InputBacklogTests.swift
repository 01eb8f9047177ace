import Clocks
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// While a sender's input waits beyond one read (`--receive-buffer`), the server puts off the room's broadcasts to
/// the next pass of its loop, which reads on at once. Nothing may wait on a pass that will not come.
@Suite(.timeLimit(.minutes(1))) struct InputBacklogTests {
    /// Twenty actions reach the server in one write, four to a 256-byte read. The third is past `--rate-limit 3`,
    /// so the sender is not read again until the server's clock, which this test never advances, lets it go on. The
    /// pass that read the first three also found more input waiting; the follower must still get their patches.
    @Test func whatWasReadGoesOutWhenTheSenderIsThenHeldBack() async throws {
        try await withServer(
            clock: ServerClock(TestClock()),
            configure: {
                $0.rateLimit = 3
                $0.receiveBufferBytes = 256
            }
        ) { server in
            let follower = try await TestClient.connect(server, using: sharedTransport)
            var sender = try RawWebSocket(port: server.port, path: "/rooms/test")
            defer { sender.close() }
            #expect(try sender.status() == 101)
            // Each frame is 64 bytes: 58 of payload (ids a10 to a29), 6 of header and mask.
            let actions = (10..<30).map { ClientMessage.action(id: "a\($0)", action: ["type": "increment"]) }
            try sender.send(all: actions.map { $0.json.serialized() })

            try await follower.catchUp(to: 3)
        }
    }
}
