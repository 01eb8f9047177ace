import Glibc
import SwiftOverlayShims
import LockstepServer
import Testing
import LockstepTestSupport

/// Refused handshakes answer HTTP/1.1 with a status that says why: 404, 400, or 503 for capacity.
@Suite(.timeLimit(.minutes(1))) struct HandshakeRefusalTests {
    @Test func aPathOutsideRoomsIsNotFound() async throws {
        try await withServer { server in
            for path in ["/nope", "/", "/room/x"] {
                let answer = try refusal(port: server.port, path: path)
                #expect(answer.hasPrefix("HTTP/1.1 404 Not Found\r\n"), "\(path): \(answer)")
                #expect(answer.hasSuffix("no such endpoint: connect to /rooms/ROOM\n"))
            }
        }
    }

    @Test func aBadRoomNameIsABadRequest() async throws {
        try await withServer { server in
            // libwebsockets resolves `/rooms/.` to `/rooms/`: `.` and `..` are no room's names.
            let long = "/rooms/" + String(repeating: "r", count: 129)
            let paths = ["/rooms/bad%20name", "/rooms/", long, "/rooms/a/b", "/rooms/."]
            for path in paths {
                let answer = try refusal(port: server.port, path: path)
                #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(path): \(answer)")
                #expect(answer.contains("Content-Type: text/plain"))
                #expect(answer.hasSuffix("characters of A-Z, a-z, 0-9, '.', '_' and '-', not '.' or '..'\n"))
            }
        }
    }

    /// libwebsockets reads `GET /rooms/a b HTTP/1.1` as path `/rooms/a` and takes `%0A` for the end of the request
    /// line; both used to be upgraded or dropped without an answer.
    @Test func aMalformedRequestLineIsABadRequest() async throws {
        try await withServer { server in
            for path in ["/rooms/a b", "/rooms/a?session=abc%0A", "/rooms/a?session=abc%0D", "/rooms/a%0Ab"] {
                let answer = try refusal(port: server.port, path: path)
                #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(path): \(answer)")
                #expect(answer.contains("malformed request line"), "\(path): \(answer)")
            }
            // Whatever header follows the request line.
            let late = try refusal(port: server.port, path: "/rooms/a?session=abc%0A", hostLast: true)
            #expect(late.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(late)")
            // Plain HTTP requests on the same port too.
            let http = try RawSocket.exchange(port: server.port, request: "GET /healthz x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(http.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(http)")
            #expect(http.contains("malformed request line"))
            // The well-formed form still upgrades.
            var upgraded = try RawWebSocket(port: server.port, path: "/rooms/a?session=abc")
            #expect(try upgraded.status() == 101)
            upgraded.close()
        }
    }

    /// libwebsockets' parser answers a broken percent escape itself, before the server sees the request (as
    /// docs/protocol.md says): never an upgrade, and never a room named by a guess at the escape.
    @Test func aBrokenPercentEscapeIsRefusedByTheParser() async throws {
        try await withServer { server in
            for path in ["/rooms/a%ZZb", "/rooms/a%2", "/rooms/a?name=%ZZ", "/rooms/a?name=%"] {
                let answer = try refusal(port: server.port, path: path)
                #expect(answer.hasPrefix("HTTP/1.0 403 Forbidden\r\n"), "\(path): \(answer)")
            }
        }
    }

    @Test func aHandshakeWithoutHostOrKeyIsABadRequest() async throws {
        try await withServer { server in
            let noHost = try RawSocket.exchange(port: server.port, request: [
                "GET /rooms/a HTTP/1.1", "Upgrade: websocket", "Connection: Upgrade",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
            ].joined(separator: "\r\n") + "\r\n\r\n")
            #expect(noHost.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(noHost)")
            #expect(noHost.hasSuffix("a WebSocket handshake needs a Host header\n"))
        }
    }

    @Test func theConnectionCapsAreServiceUnavailable() async throws {
        let caps: [(configure: (inout ServerConfiguration) -> Void, reason: String)] = [
            ({ $0.maxConnections = 1 }, "limit of 1 connections"),
            ({ $0.maxConnectionsPerAddress = 1 }, "too many connections from 127.0.0.1"),
        ]
        for cap in caps {
            try await withServer(configure: cap.configure) { server in
                let client = try await TestClient.connect(server, using: sharedTransport)
                _ = try await client.next { $0.isSnapshot }
                let answer = try refusal(port: server.port, path: "/rooms/test")
                #expect(answer.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), "\(answer)")
                #expect(answer.contains(cap.reason))
            }
        }
    }

    @Test func aBrowserPageFromAnotherOriginIsForbidden() async throws {
        try await withServer { server in
            let port = server.port
            let answer = try refusal(port: port, path: "/rooms/test", headers: ["Origin: http://evil.example"])
            #expect(answer.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(answer)")
            #expect(answer.hasSuffix("is not allowed: start the server with --allowed-origin http://evil.example\n"))
            // The server's own origin (the test's handshake says `Host: 127.0.0.1`), and clients sending no Origin.
            var page = try RawWebSocket(port: port, path: "/rooms/test", headers: ["Origin: http://127.0.0.1"])
            #expect(try page.status() == 101)
            page.close()
            var tool = try RawWebSocket(port: port, path: "/rooms/test")
            #expect(try tool.status() == 101)
            tool.close()
        }
        try await withServer(configure: { $0.allowedOrigins = ["https://app.example.com"] }) { server in
            let listed = ["Origin: https://APP.example.com"]
            var allowed = try RawWebSocket(port: server.port, path: "/rooms/test", headers: listed)
            #expect(try allowed.status() == 101)
            allowed.close()
            let other = ["Origin: https://other.example.com"]
            let answer = try refusal(port: server.port, path: "/rooms/test", headers: other)
            #expect(answer.hasPrefix("HTTP/1.1 403 Forbidden\r\n"))
        }
        try await withServer(configure: { $0.allowedOrigins = ["*"] }) { server in
            var any = try RawWebSocket(port: server.port, path: "/rooms/test", headers: ["Origin: http://evil.example"])
            #expect(try any.status() == 101)
            any.close()
        }
    }

    /// Sends a WebSocket handshake for `path` and reads the whole answer, up to the server's close.
    private func refusal(port: Int, path: String, headers: [String] = [], hostLast: Bool = false) throws -> String {
        let host = ["Host: 127.0.0.1"]
        let upgrade = [
            "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
        ]
        let lines = ["GET \(path) HTTP/1.1"] + (hostLast ? [] : host) + upgrade + headers + (hostLast ? host : [])
        let request = lines.joined(separator: "\r\n") + "\r\n\r\n"
        return try RawSocket.exchange(port: port, request: request)
    }
}
