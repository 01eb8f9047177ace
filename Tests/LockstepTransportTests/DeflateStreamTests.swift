import Testing
@testable import LockstepTransport

/// permessage-deflate end to end between this package's client and server: both lanes of a stream, echoes both ways.
@Suite(.timeLimit(.minutes(1)))
struct DeflateStreamTests {
    private func onLoop<T: Sendable>(_ server: WebSocketServer, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in server.loop.execute { continuation.resume(returning: body()) } }
    }

    private func text(_ message: InboundMessage?) -> String? {
        guard case .text(let bytes) = message else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func deflateAndPlainFollowersReadTheSameMessagesFromOneStream() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let deflating = try WebSocketClient(compression: true)
        let plain = try WebSocketClient()
        defer { deflating.shutdown(); plain.shutdown(); server.shutdown() }
        await onLoop(server) { delegate.stream = BroadcastStream(server: server, lagLimit: 1 << 20) }
        try await withTimeout {
            let compressed = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: deflating)
            let uncompressed = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: plain)
            var compressedMessages = compressed.messages.makeAsyncIterator()
            var plainMessages = uncompressed.messages.makeAsyncIterator()
            let large = String(repeating: "a message long enough to be worth compressing. ", count: 60)
            // An echo both ways: the client compresses, the server inflates, compresses its answer once.
            compressed.send("send:" + large)
            #expect(text(await compressedMessages.next()) == large)
            compressed.send("follow")
            uncompressed.send("follow")
            compressed.send("send:followed")
            uncompressed.send("send:followed")
            #expect(text(await compressedMessages.next()) == "followed")
            #expect(text(await plainMessages.next()) == "followed")
            uncompressed.send("append:" + large)
            uncompressed.send("append:small")
            #expect(text(await compressedMessages.next()) == large)
            #expect(text(await compressedMessages.next()) == "small")
            #expect(text(await plainMessages.next()) == large)
            #expect(text(await plainMessages.next()) == "small")
        }
        let (flags, lanes) = await onLoop(server) {
            (
                delegate.connections.values.sorted { $0.id < $1.id }.map(\.compressesMessages),
                (delegate.stream!.plain.head, delegate.stream!.deflated.head)
            )
        }
        #expect(flags == [true, false])
        #expect(lanes.1 * 4 < lanes.0, "the deflate lane holds the compressed forms: \(lanes)")
    }
}
