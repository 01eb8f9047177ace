import Synchronization
import Testing
@testable import LockstepTransport

// Three minutes: each test's waits are bounded by `withTimeout`'s minute, on a loaded machine.
@Suite(.timeLimit(.minutes(3)))
struct DeferredHTTPTests {
    private func makeServer(_ delegate: DeferringDelegate, waitSeconds: Int = 30) throws -> WebSocketServer {
        try WebSocketServer(configuration: .init(port: 0, responseWaitTimeoutSeconds: waitSeconds), delegate: delegate)
    }

    @Test func deferredAnswerCompletedLaterFromAnotherThreadArrivesWhole() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        let body = (0..<(600 * 1024)).map { UInt8(truncatingIfNeeded: $0 % 251) }
        try await withTimeout {
            let raw = try RawSocket(port: server.port)
            raw.get("/later?id=1")
            #expect(await delegate.recorder.wait { $0.contains(.http("GET /later 1")) })
            let promise = try #require(delegate.promise("1"))
            try await Task.detached {
                // Later for real: the loop has gone back to waiting on its sockets with the request unanswered.
                try await Task.sleep(for: .milliseconds(200))
                promise.complete(with: HTTPResponse(
                    status: 404, contentType: "application/octet-stream", body: body, headers: ["X-Deferred": "yes"]))
            }.value
            let head = raw.readHead().lowercased()
            #expect(head.hasPrefix("http/1.1 404"))
            #expect(head.contains("content-type: application/octet-stream"))
            #expect(head.contains("content-length: \(body.count)"))
            #expect(head.contains("x-deferred: yes"))
            #expect(raw.readBody(count: body.count) == body)

            // The connection stays usable: a second complete() does nothing, the next request is answered.
            promise.complete(with: HTTPResponse(status: 500, text: "twice"))
            raw.get("/plain")
            #expect(raw.readHead().hasPrefix("HTTP/1.1 200"))
            #expect(raw.readBody(count: 5) == Array("plain".utf8))
        }
    }

    @Test func nothingIsWrittenBeforeCompletion() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        try await withTimeout {
            let raw = try RawSocket(port: server.port)
            raw.get("/later?id=1")
            #expect(await delegate.recorder.wait { $0.contains(.http("GET /later 1")) })
            // A real wait: nothing may arrive in it; on a slow machine it only proves less.
            try await Task.sleep(for: .milliseconds(200))
            #expect(!raw.hasInput)
            try #require(delegate.promise("1")).complete(with: HTTPResponse(status: 200, text: "done"))
            #expect(raw.readHead().hasPrefix("HTTP/1.1 200"))
            #expect(raw.readBody(count: 4) == Array("done".utf8))
        }
    }

    @Test func promiseCompletedBeforeRespondReturnsAndHeadRequests() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        try await withTimeout {
            let raw = try RawSocket(port: server.port)
            raw.get("/now")
            #expect(raw.readHead().lowercased().contains("content-length: 7"))
            #expect(raw.readBody(count: 7) == Array("at once".utf8))

            raw.get("/later?id=head", method: "HEAD")
            #expect(await delegate.recorder.wait { $0.contains(.http("HEAD /later head")) })
            try #require(delegate.promise("head")).complete(with: HTTPResponse(status: 200, text: "no body for HEAD"))
            #expect(raw.readHead().lowercased().contains("content-length: 16"))
            raw.get("/plain")
            #expect(raw.readHead().hasPrefix("HTTP/1.1 200"))
            #expect(raw.readBody(count: 5) == Array("plain".utf8))
        }
    }

    @Test func aPromiseReturnedForASecondRequestAnswers500() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        try await withTimeout {
            let first = try RawSocket(port: server.port)
            first.get("/again")
            #expect(await delegate.recorder.wait { $0.contains(.http("GET /again ")) })
            let second = try RawSocket(port: server.port)
            second.get("/again")
            #expect(second.readHead().hasPrefix("HTTP/1.1 500"))
            try #require(delegate.promise("again")).complete(with: HTTPResponse(status: 200, text: "first"))
            #expect(first.readHead().hasPrefix("HTTP/1.1 200"))
            #expect(first.readBody(count: 5) == Array("first".utf8))
        }
    }

    @Test func completingAfterTheClientLeftIsHarmless() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        try await withTimeout {
            let raw = try RawSocket(port: server.port)
            raw.get("/later?id=gone")
            #expect(await delegate.recorder.wait { $0.contains(.http("GET /later gone")) })
            let promise = try #require(delegate.promise("gone"))
            // The server does not read while the answer waits: it finds the client gone when it writes the answer.
            raw.close()
            await Task.detached { promise.complete(with: HTTPResponse(status: 200, text: "too late")) }.value
            try await waitOnLoop(server) { promise.wsi == nil }

            let next = try RawSocket(port: server.port)
            next.get("/later?id=next")
            #expect(await delegate.recorder.wait { $0.contains(.http("GET /later next")) })
            try #require(delegate.promise("next")).complete(with: HTTPResponse(status: 200, text: "served"))
            #expect(next.readHead().hasPrefix("HTTP/1.1 200"))
            #expect(next.readBody(count: 6) == Array("served".utf8))
        }
    }

    @Test func waitingForAClientThatClosedOrSentMoreLeavesTheLoopIdle() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        try await withTimeout {
            let closed = try RawSocket(port: server.port)
            closed.get("/later?id=closed")
            let closedStream = try RawSocket(port: server.port)
            closedStream.get("/stream?id=closed")
            #expect(closedStream.readHead().hasPrefix("HTTP/1.1 200"))
            let pipelined = try RawSocket(port: server.port)
            pipelined.get("/later?id=pipelined")
            pipelined.get("/plain")
            #expect(await delegate.recorder.wait { $0.contains(.http("GET /later closed")) })
            #expect(await delegate.recorder.wait { $0.contains(.http("GET /later pipelined")) })
            let queue = try #require(delegate.queue("closed"))
            try await waitOnLoop(server) { queue.stream?.waitingWsi != nil }
            closed.close()
            closedStream.close()
            // lws reads nothing mid-transaction: unless reading pauses, poll() wakes for the waiting input at once.
            let before = await onLoop(server) { threadCPUSeconds() }
            // A real half second of the loop's life, measured in its CPU time: a busy machine gives it less, not more.
            try await Task.sleep(for: .milliseconds(500))
            let spent = await onLoop(server) { threadCPUSeconds() } - before
            #expect(spent < 0.05)

            // The pipelined request is read once the answer before it is written.
            try #require(delegate.promise("pipelined")).complete(with: HTTPResponse(status: 200, text: "first"))
            #expect(pipelined.readHead().hasPrefix("HTTP/1.1 200"))
            #expect(pipelined.readBody(count: 5) == Array("first".utf8))
            #expect(pipelined.readHead().hasPrefix("HTTP/1.1 200"))
            #expect(pipelined.readBody(count: 5) == Array("plain".utf8))
        }
    }

    @Test func twoHundredDeferredAnswersCompletedInRandomOrderReachTheirOwnClients() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        let count = 200
        try await withTimeout {
            let sockets = try (0..<count).map { _ in try RawSocket(port: server.port) }
            for (index, socket) in sockets.enumerated() { socket.get("/later?id=\(index)") }
            #expect(await delegate.recorder.wait { $0.count == count })
            // Four threads complete them at once, each in its own random order.
            let order = Array(0..<count).shuffled()
            await withTaskGroup(of: Void.self) { group in
                for part in 0..<4 {
                    group.addTask {
                        for index in order[(part * count / 4)..<((part + 1) * count / 4)].shuffled() {
                            delegate.promise("\(index)")?.complete(
                                with: HTTPResponse(status: 200, text: "answer \(index)", contentType: "text/plain"))
                        }
                    }
                }
            }
            for (index, socket) in sockets.enumerated() {
                let expected = Array("answer \(index)".utf8)
                #expect(socket.readHead().lowercased().contains("content-length: \(expected.count)"))
                #expect(socket.readBody(count: expected.count) == expected)
            }
        }
    }

    @Test func unansweredPromiseClosesTheConnectionAfterTheWaitLimit() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate, waitSeconds: 1)
        defer { server.shutdown() }
        try await withTimeout {
            let raw = try RawSocket(port: server.port)
            raw.get("/later?id=never")
            #expect(await delegate.recorder.wait { $0.contains(.http("GET /later never")) })
            #expect(raw.readsEOF())
            let promise = try #require(delegate.promise("never"))
            try await waitOnLoop(server) { promise.wsi == nil }
            promise.complete(with: HTTPResponse(status: 200, text: "too late"))
        }
    }

    @Test func answerCompletedNearTheWaitLimitIsWrittenPastIt() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate, waitSeconds: 5)
        defer { server.shutdown() }
        // More than the socket buffers hold, so the body is still being written when the wait limit has passed.
        // Completed as soon as the request is seen, well within the limit, so a loaded machine does not turn it into
        // a late answer.
        let body = [UInt8](repeating: 7, count: 32 << 20)
        try await withTimeout {
            let raw = try RawSocket(port: server.port)
            raw.get("/later?id=slow")
            #expect(await delegate.recorder.wait { $0.contains(.http("GET /later slow")) })
            try #require(delegate.promise("slow")).complete(with: HTTPResponse(status: 200, body: body))
            // A real wait past libwebsockets' own wait limit (5 s, not on any clock a test can move) before reading.
            try await Task.sleep(for: .seconds(6))
            #expect(raw.readHead().hasPrefix("HTTP/1.1 200"))
            #expect(raw.readBody(count: body.count) == body)
        }
    }

    @Test func completingAfterShutdownIsHarmless() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        let raw = try RawSocket(port: server.port)
        raw.get("/later?id=1")
        let streaming = try RawSocket(port: server.port)
        streaming.get("/stream?id=1")
        #expect(await delegate.recorder.wait { $0.contains(.http("GET /later 1")) })
        #expect(await delegate.recorder.wait { $0.contains(.http("GET /stream 1")) })
        let promise = try #require(delegate.promise("1"))
        let queue = try #require(delegate.queue("1"))
        try await withTimeout { try await waitOnLoop(server) { queue.stream?.waitingWsi != nil } }
        server.shutdown()
        #expect(promise.wsi == nil)
        #expect(queue.stream?.waitingWsi == nil)
        promise.complete(with: HTTPResponse(status: 200, text: "after shutdown"))
        queue.push(nil)
    }

    @Test func streamThatWaitsSeveralTimesArrivesWholeAndChunked() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        try await withTimeout {
            let raw = try RawSocket(port: server.port)
            raw.get("/stream?id=1")
            let head = raw.readHead().lowercased()
            #expect(head.hasPrefix("http/1.1 200"))
            #expect(head.contains("transfer-encoding: chunked"))
            let queue = try #require(delegate.queue("1"))
            let pieces = (1...5).map { index in Array(String(repeating: "\(index)", count: index * 1000).utf8) }
            for piece in pieces {
                // Each piece is pushed from another thread once the stream waits, and arrives as its own chunk.
                try await waitOnLoop(server) { queue.stream?.waitingWsi != nil }
                await Task.detached { queue.push(piece) }.value
                #expect(raw.readChunk() == piece)
            }
            try await waitOnLoop(server) { queue.stream?.waitingWsi != nil }
            await Task.detached { queue.push(nil) }.value
            #expect(raw.readChunk() == [])
            #expect(queue.laters >= pieces.count + 1)
        }
    }

    /// A chunk's size line is written digit by digit: sizes on each side of a new hexadecimal digit arrive whole, alone
    /// and several gathered into one write, and past the write buffer (through the writeable callback).
    @Test func chunksOfEverySizeLineLengthArriveWhole() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        try await withTimeout {
            let raw = try RawSocket(port: server.port)
            raw.get("/stream?id=sizes")
            #expect(raw.readHead().lowercased().contains("transfer-encoding: chunked"))
            let queue = try #require(delegate.queue("sizes"))
            let sizes = [1, 9, 10, 15, 16, 255, 256, 4_095, 4_096, 65_535, 65_536, 300_000]
            let pieces = sizes.map { size in (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) } }
            for piece in pieces {
                try await waitOnLoop(server) { queue.stream?.waitingWsi != nil }
                await Task.detached { queue.push(piece) }.value
                #expect(raw.readChunk() == piece, "a chunk of \(piece.count) bytes")
            }
            try await waitOnLoop(server) { queue.stream?.waitingWsi != nil }
            await Task.detached { for piece in pieces.prefix(9) { queue.push(piece) } }.value
            for piece in pieces.prefix(9) { #expect(raw.readChunk() == piece, "a gathered chunk of \(piece.count) bytes") }
        }
    }

    @Test func streamWhoseClientLeftMidWaitIsHarmless() async throws {
        let delegate = DeferringDelegate()
        let server = try makeServer(delegate)
        defer { server.shutdown() }
        try await withTimeout {
            let raw = try RawSocket(port: server.port)
            raw.get("/stream?id=gone")
            #expect(raw.readHead().hasPrefix("HTTP/1.1 200"))
            let queue = try #require(delegate.queue("gone"))
            try await waitOnLoop(server) { queue.stream?.waitingWsi != nil }
            // As with a promise, the server finds the client gone when it writes the next piece.
            raw.close()
            await Task.detached {
                queue.push(Array("lost".utf8))
                queue.push(nil)
            }.value
            queue.stream?.resume()

            let next = try RawSocket(port: server.port)
            next.get("/plain")
            #expect(next.readHead().hasPrefix("HTTP/1.1 200"))
            #expect(next.readBody(count: 5) == Array("plain".utf8))
        }
    }
}
