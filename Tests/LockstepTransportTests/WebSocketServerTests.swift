import Testing
@testable import LockstepTransport

// Three minutes: each test's waits are bounded by `withTimeout`'s minute, on a loaded machine.
@Suite(.timeLimit(.minutes(3)))
struct WebSocketServerTests {
    @Test func textRoundTripWithPathQueryAndHeaders() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        try await withTimeout {
            let socket = try await WebSocket.connect(
                "ws://127.0.0.1:\(server.port)/room/a?name=a%20b&x=1&x=2",
                headers: ["Authorization": "Bearer t0k"], using: client
            )
            socket.send("hello")
            var iterator = socket.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text(Array("hello".utf8)))
        }
        let seen = await withCheckedContinuation { continuation in
            server.loop.execute {
                continuation.resume(returning: [delegate.lastUpgradePath, delegate.lastUpgradeQuery["name"] ?? "-",
                    delegate.lastUpgradeQuery["x"] ?? "-", delegate.lastAuthorization ?? "-",
                    delegate.connections.values.first?.header("authorization") ?? "-",
                    delegate.connections.values.first?.path ?? "-"])
            }
        }
        #expect(seen == ["/room/a", "a b", "1", "Bearer t0k", "Bearer t0k", "/room/a"])
    }

    @Test func thousandFramesArriveInOrder() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        try await withTimeout {
            let socket = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            socket.send("burst:1000")
            var iterator = socket.messages.makeAsyncIterator()
            for index in 0..<1000 {
                #expect(await iterator.next() == .text(Array("m\(index)".utf8)))
            }
        }
    }

    @Test func rawSocketSeesSeveralFramesPerRead() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        let port = server.port
        try await withTimeout {
            let raw = try RawSocket(port: port)
            let head = raw.handshake()
            #expect(head.hasPrefix("HTTP/1.1 101"))
            raw.write(RawSocket.frame(opcode: 1, fin: true, payload: Array("burst:1000".utf8)))
            var parser = FrameParser()
            var received: [String] = []
            var maxFramesInOneRead = 0
            var bytes = raw.pending
            raw.pending = []
            while received.count < 1000 {
                if bytes.isEmpty { bytes = raw.readOnce() }
                if bytes.isEmpty { break }
                let frames = parser.feed(bytes)
                bytes = []
                maxFramesInOneRead = max(maxFramesInOneRead, frames.count)
                for frame in frames {
                    #expect(frame.opcode == 1)
                    received.append(String(decoding: frame.payload, as: UTF8.self))
                }
            }
            #expect(received == (0..<1000).map { "m\($0)" })
            #expect(maxFramesInOneRead > 1)
        }
    }

    /// Forty messages in one write, 2 400 bytes, with a 512-byte receive buffer: the pass that reads the first ones
    /// reads on while input waits (up to `inputBytesPerPass`), so all forty arrive in one pass of the loop. Read a
    /// buffer a pass, they took five.
    @Test func waitingInputIsReadOnWithinThePass() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate, receiveBufferBytes: 512)
        defer { server.shutdown() }
        let port = server.port
        try await withTimeout {
            let raw = try RawSocket(port: port)
            #expect(raw.handshake().hasPrefix("HTTP/1.1 101"))
            let messages = (10..<50).map { "echo \($0) " + String(repeating: "x", count: 46) }
            raw.write(messages.flatMap { RawSocket.frame(opcode: 1, fin: true, payload: Array($0.utf8)) })
            var parser = FrameParser()
            var echoes: [String] = []
            var bytes = raw.pending
            raw.pending = []
            while echoes.count < messages.count {
                if bytes.isEmpty { bytes = raw.readOnce() }
                if bytes.isEmpty { break }
                echoes += parser.feed(bytes).map { String(decoding: $0.payload, as: UTF8.self) }
                bytes = []
            }
            #expect(echoes == messages)
            let passes = await withCheckedContinuation { continuation in
                server.loop.execute { continuation.resume(returning: delegate.passesOfMessages) }
            }
            #expect(passes.count == messages.count)
            #expect(Set(passes).count == 1, "the messages arrived over the passes \(Set(passes).sorted())")
        }
    }

    @Test func threeMegabyteMessageRoundTrips() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate, maxMessageBytes: 4 << 20)
        // Generous: the test delegate turns the 3 MB into a String, which is slow in a debug build on a busy machine;
        // the server's loop is busy meanwhile, and answers no ping.
        let client = try WebSocketClient(silenceLimit: .seconds(120))
        defer { client.shutdown(); server.shutdown() }
        let payload = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251 + 32) }
        try await withTimeout(120) {
            let socket = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            socket.send(payload)
            var iterator = socket.messages.makeAsyncIterator()
            let message = await iterator.next()
            #expect(message == .text(payload))
        }
    }

    @Test func oversizedMessageIsReportedAndClosedWith1009() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate, maxMessageBytes: 64 * 1024)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        try await withTimeout {
            let socket = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            socket.send([UInt8](repeating: 65, count: 200_000))
            for await _ in socket.messages {}
            #expect(socket.closeCode == 1009)
        }
        let tooLarge = delegate.recorder.count {
            if case .received(_, .tooLarge(let size)) = $0 { return size > 64 * 1024 }
            return false
        }
        #expect(tooLarge == 1)
        #expect(await delegate.recorder.wait { $0.contains { if case .closed = $0 { true } else { false } } })
    }

    @Test func policyCloseCodeReachesClient() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        try await withTimeout {
            let socket = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            socket.send("first")
            socket.send("close1008")
            var texts: [InboundMessage] = []
            for await message in socket.messages { texts.append(message) }
            #expect(texts == [.text(Array("first".utf8))])
            #expect(socket.closeCode == 1008)
            #expect(socket.closeReason == "policy")
        }
    }

    @Test func binaryMessagesStayBinary() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        try await withTimeout {
            let socket = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            socket.send(binary: [0, 1, 2, 255])
            var iterator = socket.messages.makeAsyncIterator()
            #expect(await iterator.next() == .binary([0, 1, 2, 255]))
        }
        #expect(delegate.recorder.events.contains { $0 == .received(1, .binary([0, 1, 2, 255])) })
    }

    @Test func fragmentedMessageFromRawSocketIsReassembled() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        let port = server.port
        try await withTimeout {
            let raw = try RawSocket(port: port)
            #expect(raw.handshake().hasPrefix("HTTP/1.1 101"))
            raw.write(RawSocket.frame(opcode: 1, fin: false, payload: Array("ab".utf8)))
            raw.write(RawSocket.frame(opcode: 0, fin: false, payload: Array("cd".utf8)))
            raw.write(RawSocket.frame(opcode: 0, fin: true, payload: Array("ef".utf8)))
            var parser = FrameParser()
            var frames = parser.feed(raw.pending)
            while frames.isEmpty {
                let bytes = raw.readOnce()
                if bytes.isEmpty { break }
                frames += parser.feed(bytes)
            }
            #expect(frames.first?.payload == Array("abcdef".utf8))
        }
        #expect(delegate.recorder.count { $0 == .received(1, .text(Array("abcdef".utf8))) } == 1)
    }

    @Test func discardQueueDropsFramesOfStalledClientThenDrains() async throws {
        let delegate = TestDelegate()
        let big = OutboundFrame(text: [UInt8](repeating: 66, count: 64 * 1024))
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        try await withTimeout {
            let socket = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            socket.setReceiving(false)
            socket.send("ping")
            #expect(await delegate.recorder.wait { $0.contains(.received(1, .text(Array("ping".utf8)))) })
            // 400 × 64 KiB = 25 MiB: far more than loopback socket buffers absorb.
            server.loop.execute {
                for _ in 0..<400 { delegate.connections[1]?.send(big) }
            }
            // Wait (up to a minute) until the queue stops shrinking between two looks: the client is stalled.
            var previous = -1
            var stalled = false
            for _ in 0..<1_200 {
                let queued = await withCheckedContinuation { continuation in
                    server.loop.execute { continuation.resume(returning: delegate.connections[1]?.queuedBytes ?? 0) }
                }
                if queued > 0 && queued == previous { stalled = true; break }
                previous = queued
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(stalled)
            let drainsBefore = delegate.recorder.count { $0 == .drained(1) }
            #expect(drainsBefore == 0, "drain notices only come when asked for")
            server.loop.execute {
                guard let connection = delegate.connections[1] else { return }
                connection.discardQueue()
                precondition(connection.queuedBytes == 0)
                connection.notifyWhenDrained()
                connection.send(OutboundFrame(text: "marker"))
            }
            socket.setReceiving(true)
            var count = 0
            var intact = true
            for await message in socket.messages {
                if message == .text(Array("marker".utf8)) { break }
                if message == .text(Array("ping".utf8)) { continue }
                if case .text(let bytes) = message, bytes.count == 64 * 1024, bytes.allSatisfy({ $0 == 66 }) {
                    count += 1
                } else {
                    intact = false
                }
            }
            #expect(intact)
            #expect(count < 400)
            #expect(await delegate.recorder.wait { events in
                events.filter { $0 == .drained(1) }.count > drainsBefore
            })
        }
    }

    @Test func clientVanishingMidFrameClosesOnce() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        let port = server.port
        try await withTimeout {
            let raw = try RawSocket(port: port)
            #expect(raw.handshake().hasPrefix("HTTP/1.1 101"))
            let frame = RawSocket.frame(opcode: 1, fin: true, payload: [UInt8](repeating: 67, count: 1000))
            raw.write(Array(frame.prefix(500)))
            #expect(await delegate.recorder.wait { $0.contains(.opened(1)) })
            raw.close()
            #expect(await delegate.recorder.wait { $0.contains(.closed(1)) })
            // The server still serves.
            let socket = try await WebSocket.connect("ws://127.0.0.1:\(port)/", using: client)
            socket.send("still here")
            var iterator = socket.messages.makeAsyncIterator()
            #expect(await iterator.next() == .text(Array("still here".utf8)))
        }
        #expect(delegate.recorder.count { $0 == .closed(1) } == 1)
        #expect(!delegate.recorder.events.contains { if case .received(1, _) = $0 { true } else { false } })
    }

    @Test func plainHTTPGetIsAnswered() async throws {
        let delegate = TestDelegate()
        let body = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 % 26 + 97) }
        delegate.httpBody = body
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        let port = server.port
        try await withTimeout {
            let raw = try RawSocket(port: port)
            raw.write(Array("GET /health?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            let head = raw.readHead()
            #expect(head.hasPrefix("HTTP/1.1 200"))
            #expect(head.lowercased().contains("content-length: \(body.count)"))
            #expect(head.lowercased().contains("x-test: yes"))
            var received = raw.pending
            while received.count < body.count {
                let chunk = raw.readOnce()
                if chunk.isEmpty { break }
                received += chunk
            }
            #expect(received == body)
        }
        #expect(delegate.recorder.events.contains(.http("GET /health")))
    }

    @Test func refusedUpgradeFailsConnect() async throws {
        let delegate = TestDelegate()
        delegate.accept = false
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown(); server.shutdown() }
        try await withTimeout {
            await #expect(throws: TransportError.self) {
                _ = try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client)
            }
            let raw = try RawSocket(port: server.port)
            #expect(raw.handshake().hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        }
    }

    @Test func shutdownWithOpenConnections() async throws {
        let delegate = TestDelegate()
        let server = try makeServer(delegate)
        let client = try WebSocketClient()
        defer { client.shutdown() }
        try await withTimeout {
            var sockets: [WebSocket] = []
            for _ in 0..<10 {
                sockets.append(try await WebSocket.connect("ws://127.0.0.1:\(server.port)/", using: client))
            }
            server.shutdown()
            server.shutdown()
            #expect(delegate.recorder.count { if case .closed = $0 { true } else { false } } == 10)
            for socket in sockets {
                for await _ in socket.messages {}
                #expect(socket.isClosed)
            }
        }
    }
}
