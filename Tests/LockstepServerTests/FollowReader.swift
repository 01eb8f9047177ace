import Foundation
import Glibc
import LockstepJSON
import LockstepTestSupport
import Synchronization

/// A follower of a room's changes over a raw socket, as `curl -N` sees them: `GET /rooms/ROOM/log?follow=true` read on
/// a thread of its own as it arrives, its chunked body decoded, and waits for what the test expects with a deadline.
final class FollowReader: Sendable {
    /// What arrived so far.
    struct Received: Sendable {
        /// Bytes after the head still to be decoded.
        fileprivate var undecoded: [UInt8] = []
        fileprivate var headBytes: [UInt8] = []
        /// The response's header lines, lowercased; nil until the head is whole.
        var head: String?
        var status: Int?
        /// The body so far, chunks joined.
        var body: [UInt8] = []
        /// The final (empty) chunk arrived: the response ended cleanly.
        var ended = false
        /// The connection closed (or failed) on the server's side.
        var closed = false

        /// The NDJSON body's complete lines, each parsed; empty keep-alive lines are left out.
        var lines: [JSON] {
            completeLines.filter { !$0.isEmpty }.compactMap { try? JSON(parsing: $0) }
        }

        /// Empty lines of an NDJSON body.
        var emptyLines: Int { completeLines.filter(\.isEmpty).count }

        private var completeLines: [[UInt8]] {
            guard let last = body.lastIndex(of: 10) else { return [] }
            return body[..<last].split(separator: 10, omittingEmptySubsequences: false).map(Array.init)
        }

        /// The server-sent events so far (complete ones): each event's `id` and `data`, and how many comment lines
        /// came.
        var events: (events: [(id: String?, data: JSON?)], comments: Int) {
            let text = String(decoding: body, as: UTF8.self)
            guard let end = text.range(of: "\n\n", options: .backwards) else { return ([], 0) }
            var events: [(id: String?, data: JSON?)] = []
            var comments = 0
            for block in text[..<end.lowerBound].components(separatedBy: "\n\n") {
                var id: String?
                var data: String?
                for line in block.split(separator: "\n") {
                    if line.hasPrefix(":") {
                        comments += 1
                    } else if line.hasPrefix("id: ") {
                        id = String(line.dropFirst(4))
                    } else if line.hasPrefix("data: ") {
                        data = String(line.dropFirst(6))
                    }
                }
                if id != nil || data != nil { events.append((id, data.flatMap { try? JSON(parsing: Array($0.utf8)) })) }
            }
            return (events, comments)
        }

        fileprivate mutating func take(_ bytes: ArraySlice<UInt8>) {
            if head == nil {
                headBytes += bytes
                let separator: [UInt8] = [13, 10, 13, 10]
                guard let end = headBytes.indices.first(where: { headBytes[$0...].starts(with: separator) }) else {
                    return
                }
                let text = String(decoding: headBytes[..<end], as: UTF8.self).lowercased()
                head = text
                status = text.split(separator: " ").dropFirst().first.flatMap { Int($0) }
                undecoded = Array(headBytes[(end + 4)...])
            } else {
                undecoded += bytes
            }
            decode()
        }

        private mutating func decode() {
            while !ended, let lineEnd = undecoded.firstIndex(of: 13), lineEnd + 1 < undecoded.count {
                guard let size = Int(String(decoding: undecoded[..<lineEnd], as: UTF8.self), radix: 16) else {
                    return
                }
                let start = lineEnd + 2
                if size == 0 {
                    ended = true
                    return
                }
                guard start + size + 2 <= undecoded.count else { return }
                body += undecoded[start..<(start + size)]
                undecoded.removeFirst(start + size + 2)
            }
        }
    }

    private let received = Mutex(Received())
    private let fd: Int32
    /// Whether `fd` is still this reader's: the reading thread closes it under this lock, so a `close()` racing it
    /// never shuts down a descriptor the system already gave to someone else.
    private let descriptorOpen = Mutex(true)

    private init(fd: Int32) {
        self.fd = fd
    }

    /// Opens `path` (a `/log?follow=true` URL) with extra request `headers` and starts reading.
    static func open(port: Int, path: String, headers: [String] = []) async throws -> FollowReader {
        let fd = try await offThePool { () throws -> Int32 in
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw RawSocketError.failed("socket") }
            do {
                try RawSocket.connect(fd, port: port)
                let request = (["GET \(path) HTTP/1.1", "Host: 127.0.0.1"] + headers).joined(separator: "\r\n")
                try RawSocket.write(fd, Array((request + "\r\n\r\n").utf8))
            } catch {
                Glibc.close(fd)
                throw error
            }
            return fd
        }
        let reader = FollowReader(fd: fd)
        Thread.detachNewThread { reader.readUntilClosed() }
        return reader
    }

    private func readUntilClosed() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            received.withLock { $0.take(buffer[0..<count]) }
        }
        received.withLock { $0.closed = true }
        descriptorOpen.withLock { open in
            open = false
            Glibc.close(fd)
        }
    }

    /// What arrived so far.
    var now: Received { received.withLock { $0 } }

    /// Waits until `condition` holds of what arrived; fails with `TimedOut` after `seconds`.
    @discardableResult
    func wait(
        _ what: String, seconds: Double = 30, until condition: @escaping @Sendable (Received) -> Bool
    ) async throws -> Received {
        try await within(seconds, what) {
            while true {
                let now = self.now
                if condition(now) { return now }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// Goes away: the connection closes from the client's side.
    func close() {
        descriptorOpen.withLock { open in
            if open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}
