import Glibc
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import Testing
import LockstepTestSupport

/// Many hostile sockets at once (malformed frames, slowloris handshakes, oversize messages) while
/// honest clients keep working: every room must end the same for every mirror and for the server.
@Suite(.timeLimit(.minutes(2))) struct HostileFloodTests {
    @Test func honestClientsAndRoomsSurviveAFlood() async throws {
        try await withServer(configure: {
            $0.maxFrameBytes = 64 * 1024
            $0.handshakeTimeout = .seconds(2)
        }) { server in
            let port = server.port
            let rooms = ["alpha", "beta"]
            var honest: [(room: String, client: TestClient)] = []
            for index in 0..<6 {
                let room = rooms[index % rooms.count]
                honest.append((room, try await TestClient.connect(server, room: room, using: sharedTransport)))
            }

            async let garbage = onThread { HostileSockets.malformedFrames(port: port, sockets: 20, framesEach: 150) }
            async let slow = onThread { HostileSockets.slowloris(port: port, sockets: 20) }
            async let oversize = onThread { HostileSockets.oversize(port: port, sockets: 10, bytes: 100 * 1024) }

            // Honest traffic while the attack runs.
            var sent: [String: Int] = [:]
            for round in 0..<120 {
                let (room, client) = honest[round % honest.count]
                client.send(.action(id: "h\(round)", action: ["type": "increment"]))
                sent[room, default: 0] += 1
                // The honest clients' pace, so their traffic spans the attack.
                if round % 10 == 0 { try await Task.sleep(for: .milliseconds(20)) }
            }
            let (frames, slowClosed, tooLarge) = await (garbage, slow, oversize)
            #expect(frames >= 2_000, "malformed frames sent: \(frames)")
            #expect(slowClosed == 20, "slowloris sockets closed by the server: \(slowClosed) of 20")
            #expect(tooLarge == 10, "oversize senders answered too_large and 1009: \(tooLarge) of 10")

            for (room, client) in honest {
                try await client.catchUp(to: sent[room]!)
                #expect(await client.gaps.isEmpty)
                let served = try await HTTPGet(port: port, path: "/rooms/\(room)").json
                #expect(served?["state"] == (await client.state))
                #expect(await client.state == ["count": .int(sent[room]!)])
            }
            // The server still takes new clients.
            let late = try await TestClient.connect(server, room: "alpha", using: sharedTransport)
            guard case .snapshot(_, _, let version, _, _, _) = try await late.next() else {
                Issue.record("no snapshot"); return
            }
            #expect(version == sent["alpha"])
        }
    }
}

/// Blocking attackers over raw sockets; each returns what it observed.
enum HostileSockets {
    /// A masked client frame.
    static func frame(
        opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | rsv | opcode]
        let mask: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(mask | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [mask | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(mask | 127)
            bytes += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        guard masked else { return bytes + payload }
        let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// Completed handshakes that send malformed frames: junk text, invalid UTF-8, binary, and at the end
    /// of some a protocol violation the server must close on. Returns the frames sent.
    static func malformedFrames(port: Int, sockets: Int, framesEach: Int) -> Int {
        var random = SplitMix64(seed: 7)
        var sent = 0
        var open: [RawWebSocket] = []
        defer { open.forEach { $0.close() } }
        for index in 0..<sockets {
            guard var socket = try? RawWebSocket(port: port, path: "/rooms/alpha"), (try? socket.status()) == 101 else {
                continue
            }
            var stream: [UInt8] = []
            for _ in 0..<framesEach {
                let length = Int.random(in: 0..<200, using: &random)
                let junk = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                switch Int.random(in: 0..<5, using: &random) {
                case 0: stream += frame(opcode: 1, junk)
                case 1: stream += frame(opcode: 2, junk)
                case 2: stream += frame(opcode: 1, Array(#"{"type":"action","action":"#.utf8) + junk)
                case 3: stream += frame(opcode: 1, Array(#"{"type":"undo","id":"#.utf8) + junk.map { $0 | 0x80 })
                default: stream += frame(opcode: 1, Array(String(repeating: "[", count: length * 5).utf8))
                }
                sent += 1
            }
            switch index % 4 {
            case 0: stream += frame(opcode: 1, Array("{}".utf8), masked: false)
            case 1: stream += frame(opcode: 3, [1, 2, 3])
            case 2: stream += frame(opcode: 9, Array(repeating: 0x41, count: 200))
            default: stream += frame(opcode: 1, Array("{}".utf8), rsv: 0x40)
            }
            try? RawSocket.write(socket.fd, stream)
            open.append(socket)
        }
        return sent
    }

    /// Handshakes trickled a byte every 50 ms with no end; returns how many the server closed within 10 s.
    static func slowloris(port: Int, sockets: Int) -> Int {
        var fds: [Int32] = []
        defer { fds.forEach { close($0) } }
        for _ in 0..<sockets {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard (try? RawSocket.connect(fd, port: port)) != nil else { close(fd); continue }
            fds.append(fd)
        }
        let request = Array("GET /rooms/alpha HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nX-Pad: ".utf8)
        var closed = Set<Int32>()
        var step = 0
        let started = ContinuousClock.now
        while closed.count < fds.count, started.duration(to: .now) < .seconds(30) {
            let byte = step < request.count ? request[step] : UInt8(ascii: "a")
            step += 1
            for fd in fds where !closed.contains(fd) {
                let sent = [byte].withUnsafeBytes { send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
                var scratch: UInt8 = 0
                let count = recv(fd, &scratch, 1, Int32(MSG_DONTWAIT))
                if sent <= 0 || count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                    closed.insert(fd)
                }
            }
            // The slow clients' pace: a byte each every 50 ms, on a thread of their own.
            usleep(50_000)
        }
        return closed.count
    }

    /// Handshakes that send one message over the limit; returns how many got `too_large` then close 1009.
    static func oversize(port: Int, sockets: Int, bytes: Int) -> Int {
        var answered = 0
        for _ in 0..<sockets {
            guard var socket = try? RawWebSocket(port: port, path: "/rooms/beta"), (try? socket.status()) == 101 else {
                continue
            }
            defer { socket.close() }
            let payload =
                Array(#"{"type":"action","action":{"pad":""#.utf8) + Array(repeating: 0x61, count: bytes)
                + Array(#""}}"#.utf8)
            try? RawSocket.write(socket.fd, frame(opcode: 1, payload))
            var sawTooLarge = false
            while let next = try? socket.frame() {
                if next.opcode == 1, let json = try? JSON(parsing: next.payload), json["code"] == "too_large" {
                    sawTooLarge = true
                }
                if next.opcode == 8 {
                    let code = next.payload.count >= 2 ? UInt16(next.payload[0]) << 8 | UInt16(next.payload[1]) : 0
                    if sawTooLarge, code == 1009 { answered += 1 }
                    break
                }
            }
        }
        return answered
    }
}
