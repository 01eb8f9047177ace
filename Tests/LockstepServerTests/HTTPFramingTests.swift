import Foundation
import Glibc
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import LockstepTransport
import Testing

/// How a request's body is delimited on a keep-alive connection: by one `Content-Length`, arriving after the answer to
/// the request before it, within the handshake timeout. Anything else is answered at its head and the connection
/// closed, and the server goes on answering everyone else.
@Suite(.timeLimit(.minutes(2))) struct HTTPFramingTests {
    static let body = #"{"type":"action","action":{"type":"increment"}}"#
    static let postHead = "POST /rooms/test HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    static let post = postHead + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    static let get = "GET /rooms/test HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    /// A body shorter than its method: what libwebsockets reads as its body is less than the method and a space.
    static let shortPost = postHead + "Content-Length: 2\r\n\r\n{}"

    /// Sent in one write, a request with a body behind another is refused (libwebsockets would read it wrong and then
    /// spin for good, deaf to every client); the one ahead is answered, and the server goes on.
    @Test(arguments: EventLoopBackend.allCases)
    func aPipelinedRequestWithABodyIsRefusedAndTheServerGoesOn(eventLoop: EventLoopBackend) async throws {
        try await withServer(configure: { $0.eventLoop = eventLoop }) { server in
            let port = server.port
            let cases = [(Self.get, "HTTP/1.1 404"), (Self.post, "HTTP/1.1 200"), (Self.post, "HTTP/1.1 200")]
            for ((first, expected), pipelined) in zip(cases, [Self.post, Self.post, Self.shortPost]) {
                let answer = try await offThePool { try RawSocket.exchange(port: port, request: first + pipelined) }
                #expect(answer.hasPrefix(expected), "\(answer)")
                #expect(answer.components(separatedBy: "HTTP/1.1 400").count == 2, "\(answer)")
                #expect(answer.contains("must wait for the answer to the request before it"), "\(answer)")
                #expect(try await HTTPGet(port: port, path: "/healthz").status == 200)
            }
            // Only the first POST of each connection was applied.
            #expect(try await HTTPGet(port: port, path: "/rooms/test").json?["version"] == 2)
        }
    }

    /// Requests without a body may still be sent without waiting: each is answered, in order.
    @Test func pipelinedRequestsWithoutABodyAreAnsweredInOrder() async throws {
        try await withServer { server in
            let port = server.port
            let paths = ["/healthz", "/rooms/none", "/metrics"]
            let requests = paths.map { "GET \($0) HTTP/1.1\r\nHost: 127.0.0.1\r\n" }
            let request = requests.dropLast().map { $0 + "\r\n" }.joined() + requests.last!
                + "Connection: close\r\n\r\n"
            let answer = try await offThePool { try RawSocket.exchange(port: port, request: request) }
            let statuses = answer.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
            #expect(statuses == ["200", "404", "200"], "\(answer)")
        }
    }

    /// A request with a body sent after the answer to the one before shares the connection, however many follow.
    @Test func requestsWithABodyOneAfterAnotherShareAConnection() async throws {
        try await withServer { server in
            let port = server.port
            let answers = try await offThePool { () -> [String] in
                let fd = try RawSocket.open(port: port, readTimeout: 10)
                defer { close(fd) }
                var answers: [String] = []
                for _ in 0..<5 {
                    try RawSocket.write(fd, Array(Self.post.utf8))
                    let answer = RawSocket.read(fd) { String(decoding: $0, as: UTF8.self).contains("}\n") }
                    answers.append(String(decoding: answer, as: UTF8.self))
                }
                return answers
            }
            for (index, answer) in answers.enumerated() {
                #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
                #expect(answer.contains(#""version":\#(index + 1)"#), "\(answer)")
            }
        }
    }

    /// A `Content-Length` that is not one number is refused with 400 and the connection closed: read as libwebsockets
    /// reads it (`atoll`), the body would be empty or short and its bytes taken for the next request.
    @Test func aContentLengthThatIsNotOneNumberIsRefused() async throws {
        try await withServer { server in
            let port = server.port
            for lengths in [["abc"], ["-5"], ["+47"], ["47, 47"], ["47", "47"], ["0x2f"]] {
                let headers = lengths.map { "Content-Length: \($0)\r\n" }.joined()
                let request = Self.postHead + headers + "\r\n" + Self.body + Self.get
                let answer = try await offThePool { try RawSocket.exchange(port: port, request: request) }
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(lengths): \(answer)")
                #expect(answer.contains("Content-Length must be one number"), "\(lengths): \(answer)")
                // Answered once, and closed: the body was not read as a request.
                #expect(answer.components(separatedBy: "HTTP/1.1").count == 2, "\(lengths): \(answer)")
            }
            #expect(try await HTTPGet(port: port, path: "/rooms/test").status == 404)
        }
    }

    /// A `POST` without a `Content-Length` gets 411 (libwebsockets would read its body until the connection closes).
    @Test func aPostWithoutALengthIsLengthRequired() async throws {
        try await withServer { server in
            let port = server.port
            let request = Self.postHead + "\r\n"
            let answer = try await offThePool { try RawSocket.exchange(port: port, request: request) }
            #expect(answer.hasPrefix("HTTP/1.1 411 Length Required"), "\(answer)")
            #expect(answer.contains("Content-Length"), "\(answer)")
        }
    }

    /// A body announced over `--max-frame` is refused at its head with `413` `too_large`, not once it has all arrived
    /// (a terabyte never does); the connection then goes on reading the body past.
    @Test func aBodyOverTheLimitIsRefusedAtItsHead() async throws {
        try await withServer { server in
            let port = server.port
            let answer = try await offThePool { () -> String in
                let fd = try RawSocket.open(port: port, readTimeout: 10)
                defer { close(fd) }
                try RawSocket.write(fd, Array((Self.postHead + "Content-Length: 1000000000000\r\n\r\n{").utf8))
                let answer = RawSocket.read(fd) { String(decoding: $0, as: UTF8.self).contains("}\n") }
                return String(decoding: answer, as: UTF8.self)
            }
            #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
            #expect(answer.contains(#""code":"too_large""#), "\(answer)")
        }
    }

    /// Over TLS as over TCP: the pipelined body refused, one after another answered.
    @Test func overTLSAPipelinedBodyIsRefusedToo() async throws {
        let certificate = try await TestCertificate.make()
        defer { try? FileManager.default.removeItem(atPath: certificate.directory) }
        try await withServer(configure: {
            $0.tlsCertificatePath = certificate.certificatePath
            $0.tlsKeyPath = certificate.keyPath
        }) { server in
            let script = """
                import re, ssl, socket, sys
                ctx = ssl.create_default_context(cafile=sys.argv[1])
                post, get = sys.argv[3].encode(), sys.argv[4].encode()
                def connect():
                    raw = socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=10)
                    return ctx.wrap_socket(raw, server_hostname="localhost")
                s = connect()
                s.sendall(get + post)
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    data += chunk
                print("pipelined", [status.decode() for status in re.findall(rb"HTTP/1.1 (\\d{3})", data)])
                s = connect()
                for _ in range(3):
                    s.sendall(post)
                    print("sequential", s.recv(65536).split(b" ")[1].decode())
                """
            let arguments = [certificate.certificatePath, "\(server.port)", Self.post, Self.get]
            let output = try await ChildProcess.output(of: "/usr/bin/env", ["python3", "-c", script] + arguments)
            #expect(output.contains("pipelined ['404', '400']"), "\(output)")
            #expect(output.components(separatedBy: "sequential 200").count == 4, "\(output)")
        }
    }
}
