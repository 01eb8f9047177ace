import Glibc
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import Testing
import LockstepTestSupport

/// Clients that misbehave below the protocol: the server must shrug them off and keep serving.
@Suite(.timeLimit(.minutes(1))) struct HostileClientTests {
    /// A TCP connection that completed the WebSocket handshake by hand.
    private func handshake(port: Int, path: String = "/rooms/test") throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try RawSocket.connect(fd, port: port)
        let request = [
            "GET \(path) HTTP/1.1", "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
        ].joined(separator: "\r\n") + "\r\n\r\n"
        try RawSocket.write(fd, Array(request.utf8))
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let count = read(fd, &buffer, buffer.count)
        #expect(count > 0 && String(decoding: buffer[0..<max(count, 0)], as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        return fd
    }

    @Test func clientsThatVanishMidFrameOrSayNothingDoNotHurtOthers() async throws {
        try await withServer { server in
            var abandoned: [Int32] = []
            // Half a masked frame announcing 100 bytes, then the socket closes.
            for _ in 0..<20 {
                let fd = try handshake(port: server.port)
                try RawSocket.write(fd, [0x81, 0x80 | 100, 1, 2, 3, 4] + Array(repeating: 0x41, count: 30))
                close(fd)
            }
            // Handshakes that never send a frame, and TCP connections that never finish the handshake.
            for _ in 0..<20 {
                abandoned.append(try handshake(port: server.port))
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                try RawSocket.connect(fd, port: server.port)
                try RawSocket.write(fd, Array("GET /rooms/test HTTP/1.1\r\nHost: x\r\n".utf8))
                abandoned.append(fd)
            }
            defer { abandoned.forEach { close($0) } }

            let honest = try await TestClient.connect(server, using: sharedTransport)
            honest.send(.action(id: "ok", action: ["type": "increment"]))
            #expect(try await honest.next { $0.isAck } == .ack(id: "ok", version: 1))
            let room = try await HTTPGet(port: server.port, path: "/rooms/test").json
            #expect(room?["state"] == ["count": 1])
        }
    }

    @Test func garbageFromManySocketsLeavesTheRoomConsistent() async throws {
        try await withServer { server in
            let garbage = ["", "{", "null", "[]", #"{"type":"action","action":{"type":"add","amount":1e400}}"#,
                           #"{"type":"undo","id":{"x":1}}"#, String(repeating: "{\"a\":", count: 600), "\u{0}"]
            var clients: [TestClient] = []
            for _ in 0..<10 { clients.append(try await TestClient.connect(server, using: sharedTransport)) }
            for round in 0..<50 {
                for (index, client) in clients.enumerated() {
                    client.sendRaw(garbage[(round + index) % garbage.count])
                }
                clients[round % clients.count].send(.action(id: "a\(round)", action: ["type": "increment"]))
            }
            for client in clients { client.send(.history(id: "end", limit: 0)) }
            for client in clients {
                _ = try await client.next(timeout: .seconds(20)) { if case .history = $0 { true } else { false } }
                try await client.catchUp(to: 50)
                #expect(await client.state == ["count": 50])
                #expect(await client.gaps.isEmpty)
            }
        }
    }
}
