import Dispatch
import Glibc
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTransport
import Testing
import LockstepTestSupport

/// Connection caps and the handshake timeout.
@Suite(.timeLimit(.minutes(1))) struct LimitTests {
    @Test func connectionsPerAddressAreCapped() async throws {
        try await withServer(configure: { $0.maxConnectionsPerAddress = 3 }) { server in
            var clients: [TestClient] = []
            for _ in 0..<3 { clients.append(try await TestClient.connect(server, using: sharedTransport)) }
            await #expect(throws: (any Error).self) { try await TestClient.connect(server, using: sharedTransport) }
            var raw = try RawWebSocket(port: server.port, path: "/rooms/test")
            #expect(try raw.status() == 503)
            raw.close()
            // HTTP is not counted.
            #expect(try await HTTPGet(port: server.port, path: "/healthz").status == 200)
            // A slot frees once a connection closes.
            clients.removeFirst().close()
            let deadline = ContinuousClock.now + .seconds(30)
            var reopened: TestClient?
            while reopened == nil, ContinuousClock.now < deadline {
                reopened = try? await TestClient.connect(server, using: sharedTransport)
                if reopened == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(reopened != nil)
            reopened?.send(.action(id: "a", action: ["type": "increment"]))
            #expect(try await reopened?.next { $0.isAck } == .ack(id: "a", version: 1))
        }
    }

    /// Also on the epoll loop, whose timer libwebsockets re-arms only after socket activity. A request's body has the
    /// time its head had, in all: libwebsockets' own timeout starts again with each piece, so a body trickled a byte
    /// at a time held the connection for good; within the limit or over it (answered `413` at its head and read
    /// past), a body that takes longer closes the connection too.
    @Test(arguments: EventLoopBackend.allCases)
    func aHalfSentRequestIsClosedAfterTheHandshakeTimeout(eventLoop: EventLoopBackend) async throws {
        try await withServer(configure: {
            $0.handshakeTimeout = .seconds(1)
            $0.eventLoop = eventLoop
        }) { server in
            let honest = try await TestClient.connect(server, using: sharedTransport)
            let port = server.port
            @Sendable func trickle(bodyOf length: Int) -> Double? {
                let head = "POST /rooms/test HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(length)\r\n\r\n"
                return try? Slowloris.secondsUntilClosed(port: port, interval: .milliseconds(100), head: head)
            }
            // Half a request, then silence; a request trickled one byte at a time, never finished; and two bodies
            // trickled so.
            let interval = Duration.milliseconds(100)
            async let silent = onThread { try? Slowloris.secondsUntilClosed(port: port, interval: nil) }
            async let trickled = onThread { try? Slowloris.secondsUntilClosed(port: port, interval: interval) }
            async let within = onThread { trickle(bodyOf: 1_000) }
            async let over = onThread { trickle(bodyOf: 1 << 40) }
            // lws checks timeouts once a second: 1 s timeout, up to 1 s of tick, plus margin.
            let closes = await [("silent", silent), ("trickled", trickled), ("body", within), ("over", over)]
            for (kind, seconds) in closes {
                #expect(seconds.map { $0 < 4 } == true, "\(kind): closed after \(seconds.map { "\($0)" } ?? "never") s")
            }
            // Neither body reached the room; a connection past its handshake is not subject to the timeout.
            let read = try await HTTPGet(port: port, path: "/rooms/test")
            #expect(read.json?["version"] == 0)
            honest.send(.action(id: "late", action: ["type": "increment"]))
            #expect(try await honest.next { $0.isAck } == .ack(id: "late", version: 1))
        }
    }
}

/// Clients that hold a socket by never finishing their request.
enum Slowloris {
    /// Seconds from connecting until the server closes the socket (nil: still open after 10 s). `head` is sent first;
    /// with `interval`, one more byte (of an endless header, or of a body) every `interval`.
    static func secondsUntilClosed(
        port: Int, interval: Duration?, head: String = "GET /rooms/test HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    ) throws -> Double? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        try RawSocket.connect(fd, port: port)
        let started = ContinuousClock.now
        try RawSocket.write(fd, Array(head.utf8))
        while started.duration(to: .now) < .seconds(10) {
            if let interval {
                // The slow client's pace: a byte every `interval`, on a thread of its own.
                usleep(UInt32(interval / .microseconds(1)))
                let sent = [UInt8(ascii: "a")].withUnsafeBytes { send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { return seconds(since: started) }
            } else {
                // Silent: looks for the close every 50 ms.
                usleep(50_000)
            }
            // An answer before the close (a 408, a 413) is read past.
            var answer = [UInt8](repeating: 0, count: 4_096)
            let count = recv(fd, &answer, answer.count, Int32(MSG_DONTWAIT))
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return seconds(since: started) }
        }
        return nil
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: .now).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }
}

/// Runs blocking socket code on a queue of its own (its own thread), never on a cooperative thread.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue(label: "lockstep.tests.blocking").async { continuation.resume(returning: body()) }
    }
}
