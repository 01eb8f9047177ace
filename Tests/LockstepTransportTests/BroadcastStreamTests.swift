import Testing
@testable import LockstepTransport

// Three minutes: each test's waits are bounded by `withTimeout`'s minute, on a loaded machine.
@Suite(.timeLimit(.minutes(3)))
struct BroadcastStreamTests {
    /// Runs `body` on the server's loop and returns its result.
    private func onLoop<T: Sendable>(_ server: WebSocketServer, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in server.loop.execute { continuation.resume(returning: body()) } }
    }

    private func text(_ message: InboundMessage?) -> String? {
        guard case .text(let bytes) = message else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func sentAndAppendedFramesArriveInTheOrderTheyWereQueued() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        await onLoop(server) { delegate.stream = BroadcastStream(server: server, lagLimit: 1 << 20) }
        try await withTimeout {
            let writer = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            let reader = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            reader.send("follow")
            reader.send("send:following")
            var readerMessages = reader.messages.makeAsyncIterator()
            #expect(text(await readerMessages.next()) == "following")
            writer.send("follow")
            writer.send("script:a1,+s1,a2,+s2,+s3,a3")
            writer.send("send:a4")
            var writerMessages = writer.messages.makeAsyncIterator()
            var seen: [String] = []
            for _ in 0..<7 { seen.append(text(await writerMessages.next()) ?? "?") }
            #expect(seen == ["a1", "s1", "a2", "s2", "s3", "a3", "a4"])
            var read: [String] = []
            for _ in 0..<3 { read.append(text(await readerMessages.next()) ?? "?") }
            #expect(read == ["s1", "s2", "s3"])
        }
        #expect(await onLoop(server) { delegate.stream?.storedBytes } == 0, "caught up: no frame is kept")
    }

    @Test func aFollowerThatStopsReadingFallsBehindAloneAndKeepsAWholePrefix() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        await onLoop(server) {
            delegate.stream = BroadcastStream(server: server, lagLimit: 256 * 1024, stallLimit: .zero)
        }
        // Generous: 4 MB of frames, each checked as a String, is slow in a debug build on a busy machine.
        try await withTimeout(120) {
            let stalled = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            let reader = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            stalled.send("follow")
            reader.send("follow")
            stalled.send("send:following")
            var stalledMessages = stalled.messages.makeAsyncIterator()
            #expect(text(await stalledMessages.next()) == "following")
            stalled.setReceiving(false)
            // 1 000 frames of 4 KiB, 16 at a time (64 KiB, under the lag limit), each batch read by the reader.
            var readerMessages = reader.messages.makeAsyncIterator()
            var intact = true
            for batch in stride(from: 0, to: 1_000, by: 16) {
                let end = min(batch + 16, 1_000)
                reader.send("flood:\(batch)-\(end)")
                for index in batch..<end where text(await readerMessages.next()) != TestDelegate.floodFrame(index) {
                    intact = false
                }
            }
            #expect(intact, "the reader got every frame, in order")
            #expect(await delegate.recorder.wait { $0.contains(.fellBehind(1)) })
            #expect(!delegate.recorder.events.contains(.fellBehind(2)))

            stalled.send("send:after")
            stalled.setReceiving(true)
            var prefix = 0
            var next = text(await stalledMessages.next())
            while let message = next, message != "after" {
                #expect(message == TestDelegate.floodFrame(prefix), "frame \(prefix) of the stalled client's prefix")
                prefix += 1
                next = text(await stalledMessages.next())
            }
            #expect(next == "after")
            #expect(prefix < 1_000)
        }
        #expect(await onLoop(server) { delegate.stream?.followerCount } == 1)
        #expect(await onLoop(server) { delegate.stream?.storedBytes } == 0)
    }

    /// A burst far over the lag limit, appended in one pass (as a group commit releases it), does not drop a follower
    /// that drains it; the lag limit catches only a follower whose socket takes nothing for the stall limit.
    @Test func aBurstOverTheLagLimitDoesNotDropAFollowerThatDrainsIt() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        await onLoop(server) { delegate.stream = BroadcastStream(server: server, lagLimit: 64 * 1024) }
        try await withTimeout {
            let reader = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            reader.send("follow")
            var messages = reader.messages.makeAsyncIterator()
            var intact = true
            // Four bursts of 1 MiB, sixteen times the lag limit each.
            for burst in 0..<4 {
                reader.send("flood:\(burst * 256)-\((burst + 1) * 256)")
                for index in (burst * 256)..<((burst + 1) * 256)
                where text(await messages.next()) != TestDelegate.floodFrame(index) {
                    intact = false
                }
            }
            #expect(intact, "the reader got every frame, in order")
            #expect(!delegate.recorder.events.contains(.fellBehind(1)))
        }
        #expect(await onLoop(server) { delegate.stream?.followerCount } == 1)
    }

    /// A follower given its own form of a frame (`substitute`) gets it in the frame's place, in order with what was
    /// sent to it alone; the other followers, plain or deflating, get the shared frame.
    @Test func aFollowerGetsItsOwnFormOfAFrameAndTheOthersTheShared() async throws {
        try await withStreamServer { server, delegate, plain, deflating in
            let owner = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: plain)
            let compressed = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: deflating)
            let other = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: plain)
            var messages = [owner, compressed, other].map { $0.messages.makeAsyncIterator() }
            for (index, socket) in [owner, compressed, other].enumerated() {
                socket.send("follow")
                socket.send("send:following")
                #expect(text(await messages[index].next()) == "following")
            }
            let long = String(repeating: "a frame longer than the others and compressed once for its lane. ", count: 40)
            // The owner's own form of s2, an ack between, nothing in place of s3; then the compressed follower's.
            owner.send("script:+s1,~s2:own2,a3,~s3:,+\(long)")
            var seen: [[String]] = [[], [], []]
            for _ in 0..<4 { seen[0].append(text(await messages[0].next()) ?? "?") }
            compressed.send("script:~s5:own5,+s6")
            for index in 0..<3 {
                while seen[index].count < 6 { seen[index].append(text(await messages[index].next()) ?? "?") }
            }
            #expect(seen[0] == ["s1", "own2", "a3", long, "s5", "s6"])
            #expect(seen[1] == ["s1", "s2", "s3", long, "own5", "s6"])
            #expect(seen[2] == ["s1", "s2", "s3", long, "s5", "s6"])
            #expect(await onLoop(server) { delegate.stream?.storedBytes } == 0, "caught up: no frame is kept")
        }
    }

    /// permessage-deflate end to end between this package's client and server: both lanes of a stream, echoes both
    /// ways.
    @Test func deflateAndPlainFollowersReadTheSameMessagesFromOneStream() async throws {
        try await withStreamServer { server, delegate, plain, deflating in
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

    /// A server whose delegate has one stream, with a plain and a deflating client transport: `body` runs within the
    /// default time limit, and all three are shut down after it.
    private func withStreamServer(
        _ body: @escaping @Sendable (
            WebSocketServer, TestDelegate, _ plain: WebSocketClient, _ deflating: WebSocketClient
        ) async throws -> Void
    ) async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let deflating = try WebSocketClient(compression: true)
        let plain = try WebSocketClient()
        defer { deflating.shutdown(); plain.shutdown(); server.shutdown() }
        await onLoop(server) { delegate.stream = BroadcastStream(server: server, lagLimit: 1 << 20) }
        try await withTimeout { try await body(server, delegate, plain, deflating) }
    }
}
