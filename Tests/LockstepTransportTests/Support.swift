import Synchronization
import LockstepTestSupport
import Testing
@testable import LockstepTransport
#if canImport(Glibc)
import Glibc
#endif

/// Runs `body`, failing after `seconds` so a broken test never hangs. The deadline is only an upper bound (the events
/// normally come within milliseconds), generous for a loaded two-core machine running every suite at once.
func withTimeout<T: Sendable>(
    _ seconds: Double = 60, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await within(seconds, "the test's events", body)
}

enum Event: Sendable, Equatable {
    case opened(UInt64)
    case received(UInt64, InboundMessage)
    case drained(UInt64)
    case fellBehind(UInt64)
    case closed(UInt64)
    case http(String)
}

/// A thread-safe event log tests can await conditions on (no polling).
final class Recorder: Sendable {
    private struct Waiter {
        let id: Int
        let predicate: @Sendable ([Event]) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var events: [Event] = []
        var waiters: [Waiter] = []
        var nextID = 0
    }
    private let state = Mutex(State())

    var events: [Event] { state.withLock { $0.events } }

    func record(_ event: Event) {
        let ready: [Waiter] = state.withLock { state in
            state.events.append(event)
            let ready = state.waiters.filter { $0.predicate(state.events) }
            state.waiters.removeAll { waiter in ready.contains { $0.id == waiter.id } }
            return ready
        }
        for waiter in ready { waiter.continuation.resume(returning: true) }
    }

    /// Waits until `predicate` holds over all events so far; false on timeout (an upper bound, as `withTimeout`'s).
    @discardableResult
    func wait(timeout: Double = 60, until predicate: @escaping @Sendable ([Event]) -> Bool) async -> Bool {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: .seconds(timeout))
            self?.expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let satisfied = state.withLock { state -> Bool in
                if predicate(state.events) { return true }
                state.waiters.append(Waiter(id: id, predicate: predicate, continuation: continuation))
                return false
            }
            if satisfied { continuation.resume(returning: true) }
        }
    }

    private func expire(_ id: Int) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: false)
    }

    func count(_ match: @escaping @Sendable (Event) -> Bool) -> Int { events.filter(match).count }
}

/// Echo/broadcast server logic used by the tests.
// @unchecked Sendable: every property is touched only on the server's loop thread (delegate calls and
// `loop.execute` closures); `recorder` is itself Sendable.
final class TestDelegate: WebSocketServerDelegate, @unchecked Sendable {
    let recorder = Recorder()
    var accept = true
    var connections: [UInt64: WebSocketConnection] = [:]
    var lastUpgradePath = ""
    var lastUpgradeQuery: [String: String] = [:]
    var lastAuthorization: String?
    var onOpen: ((WebSocketConnection) -> Void)?
    /// The pass of the loop (`WebSocketServer.pass`) in which each message arrived, in order.
    var passesOfMessages: [Int] = []
    var httpBody: [UInt8] = Array("hello over http".utf8)
    /// The stream `follow`, `append:` and `flood:` messages use; created on the loop by the test.
    var stream: BroadcastStream?

    func refusal(of request: UpgradeRequest) -> HTTPResponse? {
        lastUpgradePath = request.path
        lastUpgradeQuery = request.query
        lastAuthorization = request.header("Authorization")
        return accept ? nil : HTTPResponse(status: 503, text: "full\n")
    }

    func connectionDidOpen(_ connection: WebSocketConnection) {
        connections[connection.id] = connection
        onOpen?(connection)
        recorder.record(.opened(connection.id))
    }

    func connection(_ connection: WebSocketConnection, didReceive message: InboundMessage) {
        passesOfMessages.append(connection.server.pass)
        recorder.record(.received(connection.id, message))
        switch message {
        case .text(let bytes):
            let text = String(decoding: bytes, as: UTF8.self)
            if text.hasPrefix("burst:"), let count = Int(text.dropFirst(6)) {
                for index in 0..<count { connection.send(OutboundFrame(text: "m\(index)")) }
            } else if text.hasPrefix("broadcast:") {
                let frame = OutboundFrame(text: String(text.dropFirst(10)))
                for other in connections.values { other.send(frame) }
            } else if text == "follow", let stream {
                connection.follow(stream)
            } else if text.hasPrefix("append:") {
                stream?.append(OutboundFrame(text: String(text.dropFirst(7))))
            } else if text.hasPrefix("send:") {
                connection.send(OutboundFrame(text: String(text.dropFirst(5))))
            } else if text.hasPrefix("script:") {
                // `script:a1,+s1` sends a1 to this connection and appends s1 to the stream, in that order;
                // `~s2:o2` appends s2 and has this connection get o2 in its place (nothing when o2 is empty).
                for step in text.dropFirst(7).split(separator: ",") {
                    if step.hasPrefix("~"), let stream {
                        let parts = step.dropFirst().split(separator: ":", omittingEmptySubsequences: false)
                        let mark = stream.append(OutboundFrame(text: String(parts[0])))
                        let own = parts[1].isEmpty ? nil : OutboundFrame(text: String(parts[1]))
                        connection.substitute(own, for: mark, in: stream)
                    } else if step.hasPrefix("+") {
                        stream?.append(OutboundFrame(text: String(step.dropFirst())))
                    } else {
                        connection.send(OutboundFrame(text: String(step)))
                    }
                }
            } else if text.hasPrefix("flood:"), let range = Self.range(text.dropFirst(6)) {
                for index in range { stream?.append(OutboundFrame(text: Self.floodFrame(index))) }
            } else if text.hasPrefix("quiet:") {
                // Needs no answer, as a presence state.
            } else if text.hasPrefix("later:") {
                // Answered from another thread a moment later, as after a storage commit: the delay is what is modelled
                // (the loop has usually ended its pass and is waiting), not a wait for an event.
                let (id, loop, answer) = (connection.id, connection.server.loop, String(text.dropFirst(6)))
                Task.detached {
                    try? await Task.sleep(for: .milliseconds(1))
                    loop.execute { self.connections[id]?.send(OutboundFrame(text: answer)) }
                }
            } else if text == "close1008" {
                connection.close(code: 1008, reason: "policy")
            } else {
                connection.send(OutboundFrame(text: bytes))
            }
        case .binary(let bytes):
            connection.send(OutboundFrame(binary: bytes))
        case .tooLarge:
            connection.close(code: 1009, reason: "too big")
        }
    }

    func connectionDidDrain(_ connection: WebSocketConnection) {
        recorder.record(.drained(connection.id))
    }

    func connectionDidFallBehind(_ connection: WebSocketConnection) {
        recorder.record(.fellBehind(connection.id))
    }

    /// Frame `index` of a flood: its number, padded to 4 KiB.
    static func floodFrame(_ index: Int) -> String {
        let label = "f\(index)-"
        return label + String(repeating: "x", count: 4096 - label.utf8.count)
    }

    /// `a-b` as `a..<b`.
    private static func range(_ text: Substring) -> Range<Int>? {
        let parts = text.split(separator: "-").compactMap { Int($0) }
        return parts.count == 2 && parts[0] <= parts[1] ? parts[0]..<parts[1] : nil
    }

    func connectionDidClose(_ connection: WebSocketConnection) {
        connections[connection.id] = nil
        recorder.record(.closed(connection.id))
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        recorder.record(.http(request.method + " " + request.path))
        return HTTPResponse(status: 200, contentType: "text/plain", body: httpBody, headers: ["X-Test": "yes"])
    }
}

func makeServer(
    _ delegate: TestDelegate, maxMessageBytes: Int = 1 << 20, receiveBufferBytes: Int = 4096
) throws -> WebSocketServer {
    try WebSocketServer(
        configuration: .init(port: 0, maxMessageBytes: maxMessageBytes, receiveBufferBytes: receiveBufferBytes),
        delegate: delegate)
}

/// A blocking POSIX TCP socket speaking WebSocket by hand.
final class RawSocket: @unchecked Sendable {
    let fd: Int32
    var pending: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        // A read gives up only after a minute: the server answers within milliseconds unless the machine is loaded.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result != 0 { throw TimedOut(what: "a connection to port \(port)") }
    }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// One recv call; empty on EOF or timeout.
    func readOnce() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? Array(buffer[..<count]) : []
    }

    /// Reads until the end of the HTTP head; returns the head, keeps the rest in `pending`.
    func readHead() -> String {
        while true {
            if let end = findHeadEnd() {
                let head = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                return head
            }
            let chunk = readOnce()
            if chunk.isEmpty { return String(decoding: pending, as: UTF8.self) }
            pending += chunk
        }
    }

    private func findHeadEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for index in 0...(pending.count - 4)
        where pending[index] == 13 && pending[index + 1] == 10 && pending[index + 2] == 13 && pending[index + 3] == 10 {
            return index
        }
        return nil
    }

    func handshake(path: String = "/") -> String {
        write(Array((
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).utf8))
        return readHead()
    }

    private var closed = false

    /// Closes once; a second close could hit an fd number another test's server already reuses.
    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    deinit { close() }

    /// A masked client frame.
    static func frame(opcode: UInt8, fin: Bool, payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let count = payload.count
        if count < 126 {
            bytes.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            bytes += [0x80 | 126, UInt8(count >> 8), UInt8(count & 0xFF)]
        } else {
            bytes.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((count >> shift) & 0xFF)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        bytes += mask
        for (index, byte) in payload.enumerated() { bytes.append(byte ^ mask[index % 4]) }
        return bytes
    }
}

/// Parses unmasked server frames out of a byte stream.
struct FrameParser {
    var buffer: [UInt8] = []

    mutating func feed(_ bytes: [UInt8]) -> [(opcode: UInt8, payload: [UInt8])] {
        buffer += bytes
        var frames: [(opcode: UInt8, payload: [UInt8])] = []
        var offset = 0
        while buffer.count - offset >= 2 {
            let opcode = buffer[offset] & 0x0F
            var length = Int(buffer[offset + 1] & 0x7F)
            var header = 2
            if length == 126 {
                guard buffer.count - offset >= 4 else { break }
                length = Int(buffer[offset + 2]) << 8 | Int(buffer[offset + 3])
                header = 4
            } else if length == 127 {
                guard buffer.count - offset >= 10 else { break }
                length = (0..<8).reduce(0) { $0 << 8 | Int(buffer[offset + 2 + $1]) }
                header = 10
            }
            guard buffer.count - offset >= header + length else { break }
            frames.append((opcode, Array(buffer[(offset + header)..<(offset + header + length)])))
            offset += header + length
        }
        buffer.removeFirst(offset)
        return frames
    }
}
