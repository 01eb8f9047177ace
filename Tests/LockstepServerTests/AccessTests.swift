import Glibc
import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepTransport
import Testing
import LockstepTestSupport

/// Tokens and roles: PROTOCOL "Access".
@Suite(.timeLimit(.minutes(2))) struct AccessTests {
    static let secret = Array("0123456789abcdef0123456789abcdef-lockstep".utf8)

    /// A server that requires tokens signed with ``secret``.
    private func withSecuredServer<T>(_ body: (SyncServer, TokenAuthority) async throws -> T) async throws -> T {
        let tokens = try await TokenAuthority(secret: Self.secret)
        return try await withServer(configure: { $0.tokens = tokens }) { server in try await body(server, tokens) }
    }

    /// Connects with `query`, expects `unauthorized` as the very first message and then close 1008.
    private func expectRefused(_ server: SyncServer, room: String = "test", query: String) async throws {
        let client = try await TestClient.connect(server, room: room, query: query, using: sharedTransport)
        let first = try await client.next()
        guard case .error(nil, "unauthorized", let message) = first else {
            Issue.record("expected unauthorized first, got \(first)")
            return
        }
        #expect(!message.isEmpty)
        #expect(await client.closeCode() == 1008)
    }

    @Test func aWriteTokenInTheQueryReadsAndWrites() async throws {
        try await withSecuredServer { server, tokens in
            let token = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(60))
            let client = try await TestClient.connect(server, query: "token=\(token)", using: sharedTransport)
            guard case .snapshot = try await client.next() else { Issue.record("no snapshot first"); return }
            client.send(.action(id: "a", action: ["type": "increment"]))
            #expect(try await client.next { $0.isAck } == .ack(id: "a", version: 1))
        }
    }

    @Test func aReadTokenReceivesEverythingButMayNotChange() async throws {
        try await withSecuredServer { server, tokens in
            let reader = try await TestClient.connect(
                server, query: "token=\(try await tokens.issue(room: "test", role: .read, lifetime: .seconds(60)))",
                using: sharedTransport
            )
            let writer = try await TestClient.connect(
                server, query: "token=\(try await tokens.issue(room: "*", role: .write, lifetime: .seconds(60)))",
                using: sharedTransport
            )
            writer.send(.action(id: "w", action: ["type": "increment"]))
            try await reader.catchUp(to: 1)
            #expect(await reader.state == ["count": 1])
            for request in [
                ClientMessage.action(id: "r", action: ["type": "increment"]), .undo(id: "r"), .redo(id: "r"),
            ] {
                reader.send(request)
                let reply = try await reader.next { if case .error = $0 { true } else { false } }
                #expect(reply == .error(id: "r", code: "forbidden", message: "this token may only read"))
            }
            reader.send(.history(id: "h", limit: 5))
            let history = try await reader.next { if case .history = $0 { true } else { false } }
            guard case .history(_, let entries) = history else { return }
            #expect(entries.count == 1)
            #expect(await reader.version == 1)
        }
    }

    @Test func aBearerHeaderWorksForWebSocket() async throws {
        try await withSecuredServer { server, tokens in
            let token = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(60))
            var socket = try RawWebSocket(
                port: server.port, path: "/rooms/test", headers: ["Authorization: Bearer \(token)"])
            defer { socket.close() }
            #expect(try socket.status() == 101)
            #expect(try socket.json()["type"] == "snapshot")
        }
    }

    @Test func refusalsComeBeforeAnyStateAndClose1008() async throws {
        try await withSecuredServer { server, tokens in
            let other = try await TokenAuthority(secret: Array("another secret of at least thirty-two bytes".utf8))
            let expired = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(-10))
            let elsewhere = try await tokens.issue(room: "other", role: .write, lifetime: .seconds(60))
            let forged = try await other.issue(room: "test", role: .write, lifetime: .seconds(60))
            let later = time(nil) + 60
            let admin = try await tokens.sign(room: "test", role: "superuser", lifetime: .seconds(60))
            let forever = try await tokens.sign(room: "test", role: "write", lifetime: nil)
            let roomless = try await tokens.sign(room: nil, role: "write", lifetime: .seconds(60))
            let badRoom = try await tokens.sign(room: "a/b", role: "write", lifetime: .seconds(60))
            // alg "none": a valid header and claims with an empty signature.
            let unsigned =
                [#"{"alg":"none","typ":"JWT"}"#, #"{"room":"test","role":"write","exp":\#(later)}"#]
                .map { base64URL(Array($0.utf8)) }
                .joined(separator: ".") + "."
            for query in [
                "", "token=", "token=garbage", "token=a.b.c", "token=\(expired)", "token=\(elsewhere)",
                "token=\(forged)", "token=\(admin)", "token=\(forever)", "token=\(roomless)", "token=\(badRoom)",
                "token=\(unsigned)",
            ] {
                try await expectRefused(server, query: query)
            }
            // Nobody joined: the room was never even created.
            #expect(
                try await HTTPGet(
                    port: server.port, path: "/rooms/test",
                    headers: [
                        "Authorization: Bearer \(try await tokens.issue(room: "test", role: .read, lifetime: .seconds(60)))"
                    ]
                ).status == 404)
        }
    }

    @Test func aRefusedClientSeesNoPresenceOrPatches() async throws {
        try await withSecuredServer { server, tokens in
            let token = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(60))
            let member = try await TestClient.connect(server, query: "token=\(token)", using: sharedTransport)
            member.send(.action(id: "a", action: ["type": "increment"]))
            _ = try await member.next { $0.isAck }
            var raw = try RawWebSocket(port: server.port, path: "/rooms/test", headers: ["Authorization: Bearer nope"])
            defer { raw.close() }
            #expect(try raw.status() == 101)
            let first = try raw.json()
            #expect(first["type"] == "error" && first["code"] == "unauthorized")
            #expect(try raw.closeCode() == 1008)
        }
    }

    @Test func httpRoomReadsNeedABearerToken() async throws {
        try await withSecuredServer { server, tokens in
            let token = try await tokens.issue(room: "test", role: .read, lifetime: .seconds(60))
            let writer = try await TestClient.connect(
                server, query: "token=\(try await tokens.issue(room: "test", role: .write, lifetime: .seconds(60)))",
                using: sharedTransport
            )
            writer.send(.action(id: "a", action: ["type": "increment"]))
            _ = try await writer.next { $0.isAck }

            let port = server.port
            let anonymous = try await HTTPGet(port: port, path: "/rooms/test")
            #expect(anonymous.status == 401 && anonymous.head.contains("www-authenticate: bearer"))
            #expect(anonymous.text.hasPrefix("unauthorized: "))
            #expect(try await HTTPGet(port: port, path: "/rooms/test", headers: ["Authorization: Basic abc"]).status == 401)
            #expect(try await HTTPGet(port: port, path: "/rooms/test?token=\(token)").status == 401)
            let elsewhere = try await tokens.issue(room: "other", role: .write, lifetime: .seconds(60))
            let misplaced = try await HTTPGet(
                port: port, path: "/rooms/test", headers: ["Authorization: Bearer \(elsewhere)"])
            #expect(misplaced.status == 403)
            #expect(misplaced.text == "forbidden: the token is for room 'other', not 'test'\n")
            let granted = try await HTTPGet(port: port, path: "/rooms/test", headers: ["Authorization: Bearer \(token)"])
            #expect(granted.status == 200)
            #expect(granted.json?["state"] == ["count": 1])
            #expect(try await HTTPGet(port: port, path: "/healthz").status == 200)
            #expect(try await HTTPGet(port: port, path: "/metrics").text.contains("lockstep_connections"))
        }
    }

    @Test func withoutASecretEveryoneReadsAndWrites() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, query: "token=ignored", using: sharedTransport)
            client.send(.action(id: "a", action: ["type": "increment"]))
            #expect(try await client.next { $0.isAck } == .ack(id: "a", version: 1))
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").status == 200)
        }
    }

    @Test func aShortSecretIsRefused() async throws {
        await #expect(throws: AccessError.weakSecret(bytes: 5)) {
            try await TokenAuthority(secret: Array("short".utf8))
        }
    }

    @Test func tokensVerifyAndNameTheirProblem() async throws {
        let tokens = try await TokenAuthority(secret: Self.secret)
        let token = try await tokens.issue(room: "*", role: .read, lifetime: .seconds(60))
        #expect(try tokens.authorize(token, room: "any") == AccessGrant(room: "*", role: .read))
        #expect(throws: AccessError.missingToken) { try tokens.authorize(nil, room: "any") }
        let expired = try await tokens.issue(room: "a", role: .read, lifetime: .seconds(-1))
        #expect(throws: AccessError.expired) { try tokens.verify(expired) }
        await #expect(throws: AccessError.self) {
            try await tokens.issue(room: "a/b", role: .read, lifetime: .seconds(1))
        }
        #expect(TokenAuthority.bearerToken(in: "Bearer abc") == "abc")
        #expect(TokenAuthority.bearerToken(in: "bearer   abc ") == "abc")
        #expect(TokenAuthority.bearerToken(in: "Basic abc") == nil)
        #expect(TokenAuthority.bearerToken(in: "Bearer") == nil)
    }

    @Test func durationsAndLoopbackHosts() {
        #expect(Duration(shorthand: "30s") == .seconds(30))
        #expect(Duration(shorthand: "15m") == .seconds(900))
        #expect(Duration(shorthand: "1h") == .seconds(3_600))
        #expect(Duration(shorthand: "7d") == .seconds(604_800))
        #expect(Duration(shorthand: "10") == .seconds(10))
        #expect(Duration(shorthand: "500ms") == .milliseconds(500))
        for bad in ["", "h", "-1s", "1.5h", "1w", "99999999999999999d", "１h", "ms", "-5ms", "1.5ms"] {
            #expect(Duration(shorthand: bad) == nil)
        }
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "lo"] {
            #expect(ServerConfiguration.isLoopback(host))
        }
        for host in ["0.0.0.0", "", "::", "*", "10.0.0.1", "128.0.0.1", "example.com", "127.0.0.256"] {
            #expect(!ServerConfiguration.isLoopback(host))
        }
    }
}

/// Unpadded base64url, as JWT spells its parts.
private func base64URL(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    var text = ""
    var index = 0
    while index < bytes.count {
        let chunk = bytes[index..<min(index + 3, bytes.count)]
        let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
        for position in 0...chunk.count { text.append(alphabet[(value >> (18 - 6 * position)) & 63]) }
        index += 3
    }
    return text
}
