import Glibc
public import LockstepJSON
// Once a dependency imports this shim module too, `timeval` members resolve through it.
import SwiftOverlayShims

/// One plain HTTP/1.1 request over a raw socket (a GET unless told otherwise): what curl would see.
public struct HTTPGet: Sendable {
    public let status: Int
    public let body: [UInt8]
    /// The response's header lines, lowercased.
    public let head: String

    public var json: JSON? { try? JSON(parsing: body) }
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// Waits for the answer on a thread of its own: a blocked thread of Swift's small task pool would hold back
    /// every task of the test run, the server's storage included.
    public init(
        host: String = "127.0.0.1", port: Int, method: String = "GET", path: String, headers: [String] = [],
        body: [UInt8] = []
    ) async throws {
        self = try await offThePool {
            try HTTPGet(blockingHost: host, port: port, method: method, path: path, headers: headers, body: body)
        }
    }

    /// A `POST` of `body` as `application/json` (unless `headers` names another type).
    public static func post(
        port: Int, path: String, json body: String, headers: [String] = []
    ) async throws -> HTTPGet {
        let type = headers.contains { $0.lowercased().hasPrefix("content-type:") } ? [] : ["Content-Type: application/json"]
        return try await HTTPGet(port: port, method: "POST", path: path, headers: type + headers, body: Array(body.utf8))
    }

    private init(
        blockingHost host: String, port: Int, method: String, path: String, headers: [String], body sent: [UInt8]
    ) throws {
        // A minute before a read gives up: an upper bound, generous for a loaded machine.
        let fd = try RawSocket.open(host: host, port: port, readTimeout: 60)
        defer { Glibc.close(fd) }
        let length = sent.isEmpty && method == "GET" ? [] : ["Content-Length: \(sent.count)"]
        let request = (["\(method) \(path) HTTP/1.1", "Host: \(host)", "Connection: close"] + length + headers)
            .joined(separator: "\r\n") + "\r\n\r\n"
        try RawSocket.write(fd, Array(request.utf8) + sent)
        let response = RawSocket.read(fd) { Self.parse($0)?.complete == true }
        guard let parsed = Self.parse(response) else { throw RawSocketError.failed("no HTTP response") }
        status = parsed.status
        body = parsed.body
        head = parsed.head
    }

    /// The NDJSON body's lines, each parsed.
    public var lines: [JSON] {
        body.split(separator: 10).compactMap { try? JSON(parsing: Array($0)) }
    }

    private static func parse(_ bytes: [UInt8]) -> (status: Int, body: [UInt8], complete: Bool, head: String)? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
        let statusLine = head.split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        let body = Array(bytes[(end + 4)...])
        var length: Int?
        for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
            length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: " "))
        }
        if let length { return (status, Array(body.prefix(length)), body.count >= length, head) }
        if head.contains("transfer-encoding: chunked") {
            let (decoded, complete) = dechunk(body)
            return (status, decoded, complete, head)
        }
        return (status, body, false, head)
    }

    /// The body of a chunked response, and whether its final (empty) chunk arrived.
    private static func dechunk(_ bytes: [UInt8]) -> (body: [UInt8], complete: Bool) {
        var body: [UInt8] = []
        var index = 0
        while let lineEnd = bytes[index...].firstIndex(of: 13), lineEnd + 1 < bytes.count {
            guard let size = Int(String(decoding: bytes[index..<lineEnd], as: UTF8.self), radix: 16) else { break }
            if size == 0 { return (body, true) }
            let start = lineEnd + 2
            guard start + size + 2 <= bytes.count else { break }
            body += bytes[start..<(start + size)]
            index = start + size + 2
        }
        return (body, false)
    }
}

/// Minimal POSIX socket calls for tests that must speak below WebSocket.
public enum RawSocket {
    public static func connect(_ fd: Int32, host: String = "127.0.0.1", port: Int) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw RawSocketError.failed("connect") }
    }

    /// Sends `request` as it is on a new connection and returns everything the server sent until it closed (or ten
    /// seconds passed without a byte): for requests no client library would make.
    public static func exchange(port: Int, request: String) throws -> String {
        let fd = try open(port: port, readTimeout: 10)
        defer { close(fd) }
        try write(fd, Array(request.utf8))
        return String(decoding: read(fd), as: UTF8.self)
    }

    /// A connected socket whose reads give up after `readTimeout` seconds without a byte.
    public static func open(host: String = "127.0.0.1", port: Int, readTimeout: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError.failed("socket") }
        var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        do {
            try connect(fd, host: host, port: port)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// What `fd` gives until the peer closes, a read times out, or `complete` holds for what arrived.
    public static func read(_ fd: Int32, until complete: ([UInt8]) -> Bool = { _ in false }) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !complete(bytes) {
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    public static func write(_ fd: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw RawSocketError.failed("send") }
            sent += count
        }
    }
}

public enum RawSocketError: Error {
    case failed(String)
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
