import Foundation
import Glibc
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import LockstepTransport
import Testing

/// `--tls-cert` / `--tls-key`: the port speaks TLS only, to the SDK, Python's ssl module and websocat alike, with a
/// certificate `openssl` makes for the test.
@Suite(.timeLimit(.minutes(2))) struct TLSTests {
    private func withTLSServer<T>(
        _ certificate: TestCertificate, _ body: (SyncServer) async throws -> T
    ) async throws -> T {
        try await withServer(configure: { configuration in
            configuration.tlsCertificatePath = certificate.certificatePath
            configuration.tlsKeyPath = certificate.keyPath
        }, body)
    }

    @Test func theSDKRoundTripsOverWss() async throws {
        let certificate = try await TestCertificate.make()
        defer { try? FileManager.default.removeItem(atPath: certificate.directory) }
        let transport = try WebSocketClient(trustedCertificatesFile: certificate.certificatePath)
        defer { transport.shutdown() }
        try await withTLSServer(certificate) { server in
            for host in ["localhost", "127.0.0.1"] {
                let room = try RoomClient(url: "wss://\(host):\(server.port)/rooms/tls", transport: transport)
                try await room.connect()
                let version = try await room.send(action: ["type": "increment"])
                #expect(await room.state == ["count": JSON(integerLiteral: version)], "\(host)")
                await room.close()
            }
            // The raw transport too: frames larger than one TLS record both ways.
            let socket = try await WebSocket.connect("wss://localhost:\(server.port)/rooms/big", using: transport)
            var messages = socket.messages.makeAsyncIterator()
            guard case .text(let snapshot) = await messages.next() else { throw TLSTestError.noMessage }
            #expect(String(decoding: snapshot, as: UTF8.self).contains(#""type":"snapshot""#))
            let padding = String(repeating: "p", count: 40_000)
            socket.send(#"{"type":"action","id":"a","action":{"type":"add","amount":1,"note":""# + padding + #""}}"#)
            var answer = ""
            while !answer.contains(#""id":"a""#), case .text(let bytes) = await messages.next() {
                answer = String(decoding: bytes, as: UTF8.self)
            }
            #expect(answer.contains(#""id":"a""#), "a 40 kB request reached the server and was answered: \(answer)")
            socket.close()
        }
    }

    @Test func httpsAnswersEveryHTTPEndpoint() async throws {
        let certificate = try await TestCertificate.make()
        defer { try? FileManager.default.removeItem(atPath: certificate.directory) }
        try await withTLSServer(certificate) { server in
            let script = """
                import ssl, http.client, socket, sys
                ctx = ssl.create_default_context(cafile=sys.argv[1])
                port = int(sys.argv[2])
                raw = socket.create_connection(("127.0.0.1", port), timeout=10)
                s = ctx.wrap_socket(raw, server_hostname="localhost")
                s.sendall(b"GET /rooms/py HTTP/1.1\\r\\nHost: localhost\\r\\nUpgrade: websocket\\r\\n"
                          b"Connection: Upgrade\\r\\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\n"
                          b"Sec-WebSocket-Version: 13\\r\\n\\r\\n")
                data = b""
                while b'"snapshot"' not in data:
                    chunk = s.recv(4096)
                    if not chunk: break
                    data += chunk
                print(data.split(b"\\r\\n")[0].decode(), b'"type":"snapshot"' in data)
                for path in ["/healthz", "/rooms/py", "/metrics"]:
                    c = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=10)
                    c.request("GET", path)
                    r = c.getresponse()
                    print(path, r.status, len(r.read()))
                """
            let arguments = ["python3", "-c", script, certificate.certificatePath, "\(server.port)"]
            let output = try await ChildProcess.output(of: "/usr/bin/env", arguments)
            #expect(output.contains("/healthz 200 2"), "\(output)")
            #expect(output.contains("/rooms/py 200"), "\(output)")
            #expect(output.contains("/metrics 200"), "\(output)")
            #expect(output.contains("HTTP/1.1 101 Switching Protocols True"), "\(output)")
        }
    }

    @Test func websocatReadsTheSnapshotOverWss() async throws {
        let certificate = try await TestCertificate.make()
        defer { try? FileManager.default.removeItem(atPath: certificate.directory) }
        try await withTLSServer(certificate) { server in
            // websocat trusts what OpenSSL trusts: SSL_CERT_FILE names the test's certificate.
            let child = try ChildProcess(
                executable: "/usr/bin/env",
                arguments: [
                    "SSL_CERT_FILE=\(certificate.certificatePath)", "websocat", "--no-close", "-t",
                    "wss://localhost:\(server.port)/rooms/cat",
                ])
            let line = try await offThePool { () -> String in
                var text = ""
                var chunk = [UInt8](repeating: 0, count: 4_096)
                let deadline = Date().addingTimeInterval(20)
                while Date() < deadline, !text.contains("\n") {
                    guard let count = child.readChunk(into: &chunk, waitingAtMost: 500) else { break }
                    text += String(decoding: chunk[0..<count], as: UTF8.self)
                }
                child.send(SIGKILL)
                child.waitForExit()
                return text
            }
            #expect(line.hasPrefix(#"{"type":"snapshot","room":"cat""#), "\(line)")
        }
    }

    @Test func aPlainHandshakeOnTheTLSPortIsRefused() async throws {
        let certificate = try await TestCertificate.make()
        defer { try? FileManager.default.removeItem(atPath: certificate.directory) }
        let plain = try WebSocketClient()
        defer { plain.shutdown() }
        try await withTLSServer(certificate) { server in
            let port = server.port
            let status = try await offThePool { () -> Int? in
                var socket = try RawWebSocket(port: port, path: "/rooms/plain", timeoutSeconds: 5)
                defer { socket.close() }
                return try? socket.status()
            }
            #expect(status == nil, "a plaintext handshake got HTTP \(status ?? 0)")
            await #expect(throws: TransportError.self) {
                _ = try await WebSocket.connect("ws://127.0.0.1:\(port)/rooms/plain", using: plain)
            }
            // And a client that does not trust the certificate is told why.
            do {
                _ = try await WebSocket.connect("wss://localhost:\(port)/rooms/plain", using: plain)
                Issue.record("an untrusted certificate was accepted")
            } catch let error as TransportError {
                #expect(error.message.contains("not trusted"), "\(error.message)")
            }
        }
    }
}

private enum TLSTestError: Error {
    case noMessage
}
