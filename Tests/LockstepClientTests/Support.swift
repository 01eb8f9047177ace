import Foundation
import LockstepApps
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepServer
#if canImport(Glibc)
import Glibc
#endif

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `body`, failing with `TimedOut` after `seconds`, so a test that waits for an event that never comes fails.
func within<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// A real server on a free loopback port (or `port`), for the duration of `body`.
func withServer<T>(
    app: App = .counter, port: Int = 0, _ body: (SyncServer) async throws -> T
) async throws -> T {
    let server = try makeServer(app: app, port: port)
    defer { server.shutdown() }
    return try await body(server)
}

func makeServer(app: App, port: Int = 0) throws -> SyncServer {
    var configuration = ServerConfiguration(app: app)
    configuration.port = port
    configuration.rateLimit = 0
    return try SyncServer(configuration: configuration)
}

func roomURL(_ server: SyncServer, _ room: String) -> String { "ws://127.0.0.1:\(server.port)/rooms/\(room)" }

/// A fast retry policy so reconnection tests do not wait seconds.
let quickRetry = ReconnectPolicy(initialDelay: .milliseconds(20), maxDelay: .milliseconds(200))

/// `GET /rooms/ROOM` over a plain socket: the server's own view of a room, `(version, state)`.
func fetchRoom(port: Int, room: String) throws -> (version: Int, state: JSON) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TimedOut(what: "a socket") }
    defer { Glibc.close(fd) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else { throw TimedOut(what: "an HTTP connection") }
    let request = Array("GET /rooms/\(room) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        response += buffer[..<count]
        if let body = httpBody(response), body.count >= contentLength(response) ?? Int.max { break }
    }
    guard let body = httpBody(response) else { throw TimedOut(what: "an HTTP response") }
    let json = try JSON(parsing: body)
    return (json["version"]?.intValue ?? -1, json["state"] ?? .null)
}

private func httpBody(_ response: [UInt8]) -> [UInt8]? {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard response.count >= 4 else { return nil }
    for index in 0...(response.count - 4) where Array(response[index..<index + 4]) == separator {
        return Array(response[(index + 4)...])
    }
    return nil
}

private func contentLength(_ response: [UInt8]) -> Int? {
    let head = String(decoding: response, as: UTF8.self).lowercased()
    guard let range = head.range(of: "content-length:") else { return nil }
    return Int(head[range.upperBound...].prefix { $0 != "\r" }.trimmingCharacters(in: .whitespaces))
}

/// Reads a client's updates until one satisfies `done`, returning all of them; bounded by `seconds`.
func updates(
    of client: RoomClient, within seconds: Double = 10, until done: @escaping @Sendable (RoomUpdate) -> Bool
) async throws -> [RoomUpdate] {
    try await within(seconds, "an update of \(client.room)") {
        var seen: [RoomUpdate] = []
        for await update in client.updates {
            seen.append(update)
            if done(update) { return seen }
        }
        throw TimedOut(what: "an update (the stream ended)")
    }
}

/// The versions a sequence of updates showed, checking each patch follows its predecessor.
func isContiguous(_ updates: [RoomUpdate]) -> Bool {
    var version: Int?
    for update in updates {
        switch update.change {
        case .snapshot: version = update.version
        case .patch:
            guard let previous = version, update.version == previous + 1 else { return false }
            version = update.version
        default: continue
        }
    }
    return true
}
