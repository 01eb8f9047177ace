import Foundation
import Histogram
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
// Once a dependency imports this shim module too, `timeval` members resolve through it.
#if canImport(SwiftOverlayShims)
import SwiftOverlayShims
#endif

/// One writer of `lockstep load --scenario http`: a keep-alive HTTP/1.1 connection posting one action at a time to
/// `POST /rooms/ROOM` (closed loop: send, wait for the answer, send again) while the run lasts.
///
/// Each request's id is `w<writer>-<sequence>-<sent nanos>`, as a WebSocket writer's, so the readers time the patch
/// it causes from the moment it was sent; the writer times each answer itself. Every writer's non-blocking socket is
/// served by one thread (``LoadHTTPLoop``), as the WebSocket clients share their shard's loop: a thread per writer,
/// blocked in `recv`, would make each answer wake a thread of its own, which on loopback the kernel charges to the
/// server that sends it. Every request sent ends as an ack (`200` with its version) or an error (another status, no
/// answer within the timeout, or a closed connection, after which it connects again once).
// @unchecked Sendable: the `var`s belong to the loop's thread from `LoadHTTPLoop.start(at:)` until it signals that it
// finished; the main thread touches them only before (`connectBeforeTiming`) and after. Live counts are atomics.
final class LoadHTTPWriter: @unchecked Sendable {
    /// The writer's number, in its actions' ids.
    let index: Int
    let target: LoadHTTPTarget
    /// The request head up to the body's length, which changes with each id.
    private let head: [UInt8]
    private let actionJSON: String
    private let actionHasID: Bool
    private let sourceAddress: String?
    private let timeout: Duration
    private let timeoutNanos: UInt64

    // Live totals, read by the main thread.
    let sent = Atomic<Int>(0)
    let acked = Atomic<Int>(0)
    let errors = Atomic<Int>(0)

    // The loop thread's state.
    private(set) var connection: Int32 = -1
    /// Connections opened so far: tells the loop a new one from an old one of the same descriptor number.
    private(set) var connections = 0
    /// Bytes received and not yet consumed.
    private var received: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 16_384)
    /// The request being sent, rebuilt in place for each one: the writer, on the server's cores, is not to be the
    /// slower side of the comparison.
    private var request: [UInt8] = []
    /// How much of `request` the socket has taken.
    private var written = 0
    private var sequence = 0
    /// When the request in flight was sent, if one is.
    private var sentNanos: UInt64?
    /// Set once connecting again failed: the writer sends nothing more.
    private(set) var gaveUp = false
    /// Sent to answered, in microseconds, every request.
    private(set) var latencies = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three)
    /// The version of every acked request.
    private(set) var versions: [Int] = []
    private(set) var lastAckNanos: UInt64 = 0
    private(set) var firstError: String?

    /// A writer posting `actionJSON` (its `$ID` replaced by each request's id, its `$PATH` by `/n`) to `target`,
    /// with `authorization` as its `Authorization` header, from `sourceAddress` (an IPv4 address) if given; each
    /// connect and answer may take up to `timeout`.
    init(
        index: Int, target: LoadHTTPTarget, actionJSON: String, authorization: String?, sourceAddress: String?,
        timeout: Duration
    ) {
        self.index = index
        self.target = target
        self.actionJSON = actionJSON.replacing("$PATH", with: "/n")
        actionHasID = actionJSON.contains("$ID")
        self.sourceAddress = sourceAddress
        self.timeout = timeout
        timeoutNanos = timeout.nanoseconds
        var head = "POST \(target.path) HTTP/1.1\r\nHost: \(target.hostHeader)\r\nContent-Type: application/json\r\n"
        if let authorization { head += "Authorization: \(authorization)\r\n" }
        self.head = Array((head + "Content-Length: ").utf8)
    }

    deinit {
        if connection >= 0 { close(connection) }
    }

    /// Opens the connection before timing starts. Main thread, before the loop starts.
    func connectBeforeTiming() throws(LoadError) {
        if let failure = open() { throw .connect("HTTP writer \(index): \(failure)") }
    }

    // MARK: - Loop thread

    /// Whether a request is in flight: sent, or being sent, and not yet answered.
    var isWaiting: Bool { sentNanos != nil }

    /// Whether the socket still has part of the request to take.
    var isSending: Bool { written < request.count }

    /// Sends the next request, connecting again first if the last connection ended; gives up if that fails.
    func postNext(now: UInt64) {
        guard !gaveUp, !isWaiting else { return }
        if connection < 0, let failure = open() {
            record(error: "HTTP writer \(index): \(failure)")
            gaveUp = true
            return
        }
        sequence += 1
        let id = "w\(index)-\(sequence)-\(now)"
        let action = actionHasID ? actionJSON.replacing("$ID", with: id) : actionJSON
        let body = #"{"type":"action","id":"\#(id)","action":\#(action)}"#.utf8
        request.removeAll(keepingCapacity: true)
        request += head
        request += String(body.count).utf8
        request += [13, 10, 13, 10]
        request += body
        written = 0
        sentNanos = now
        sent.add(1, ordering: .relaxed)
        sendMore()
    }

    /// Hands the socket as much of the request as it takes.
    func sendMore() {
        while isSending {
            let count = request[written...].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                written += count
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return
            } else {
                fail("sending failed: \(String(cString: strerror(errno)))")
                return
            }
        }
    }

    /// Reads what the socket has, then takes every whole answer from it.
    func receive() {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += chunk[0..<count]
                if count < chunk.count { break }
            } else if count == 0 {
                fail("the server closed the connection before answering")
                return
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                break
            } else {
                fail("reading the answer failed: \(String(cString: strerror(errno)))")
                return
            }
        }
        switch parseAnswer() {
        case nil: return
        case .failure(let failure): fail(failure.message)
        case .success(let answer): complete(answer, at: LoadClock.now())
        }
    }

    /// Fails the request in flight if it has waited longer than the timeout.
    func checkTimeout(now: UInt64) {
        guard let sentNanos, now > sentNanos, now - sentNanos > timeoutNanos else { return }
        fail("no answer within --request-timeout \(timeout.seconds) s")
    }

    private func complete(_ answer: Answer, at now: UInt64) {
        _ = latencies.record(max(1, min((now - (sentNanos ?? now)) / 1000, 600_000_000)))
        sentNanos = nil
        if answer.status == 200, let version = Self.version(in: received[answer.body]) {
            versions.append(version)
            lastAckNanos = now
            acked.add(1, ordering: .relaxed)
        } else {
            record(error: "HTTP \(answer.status): \(String(decoding: received[answer.body], as: UTF8.self))")
        }
        received.removeSubrange(0..<answer.body.upperBound)
        if answer.closes { closeSocket() }
    }

    /// Ends the request in flight as an error and the connection with it; the next request connects again.
    private func fail(_ message: String) {
        record(error: "HTTP writer \(index): \(message)")
        sentNanos = nil
        closeSocket()
    }

    private func record(error: String) {
        errors.add(1, ordering: .relaxed)
        if firstError == nil { firstError = error }
    }

    /// A whole answer: its status, where its body lies in `received`, and whether the server closes the connection
    /// after it.
    private struct Answer {
        var status: Int
        var body: Range<Int>
        var closes: Bool
    }

    /// Why no answer could be read.
    private struct Failure: Error {
        var message: String
    }

    /// The first answer in `received` (a head and its `Content-Length` body), nil until all of it is there. The head
    /// is read as bytes, without a string per line.
    private func parseAnswer() -> Result<Answer, Failure>? {
        guard let end = Self.endOfHead(in: received) else { return nil }
        let head = received[..<end]
        let lines = head.split(separator: 10).map { $0.last == 13 ? $0.dropLast() : $0 }
        let statusLine = lines.first ?? []
        let parts = statusLine.split(separator: 32, maxSplits: 2)
        guard parts.count >= 2, parts[0].starts(with: Self.httpPrefix), let status = Self.integer(parts[1]) else {
            let start = String(decoding: statusLine.prefix(80), as: UTF8.self)
            return .failure(Failure(message: "not an HTTP answer: \(start)"))
        }
        var length = 0
        var closes = parts[0].elementsEqual(Self.http10)
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 58) else { continue }
            let name = line[..<colon]
            let value = line[(colon + 1)...].drop(while: { $0 == 32 || $0 == 9 })
            if Self.equalsIgnoringCase(name, "content-length") {
                length = Self.integer(value) ?? 0
            } else if Self.equalsIgnoringCase(name, "connection") {
                if Self.equalsIgnoringCase(value, "close") { closes = true }
                if Self.equalsIgnoringCase(value, "keep-alive") { closes = false }
            } else if Self.equalsIgnoringCase(name, "transfer-encoding"), !Self.equalsIgnoringCase(value, "identity") {
                let encoding = String(decoding: value, as: UTF8.self)
                return .failure(Failure(message: "answer with Transfer-Encoding \(encoding), expected Content-Length"))
            }
        }
        guard received.count >= end + length else { return nil }
        return .success(Answer(status: status, body: end..<(end + length), closes: closes))
    }

    private static let httpPrefix = Array("HTTP/1.".utf8)
    private static let http10 = Array("HTTP/1.0".utf8)

    /// Whether `bytes` spell `name` (ASCII, lowercase), whatever their case.
    private static func equalsIgnoringCase(_ bytes: ArraySlice<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        return name.withUTF8Buffer { name in
            zip(bytes, name).allSatisfy { byte, wanted in
                (65...90).contains(byte) ? byte | 32 == wanted : byte == wanted
            }
        }
    }

    /// The decimal number `bytes` spell (trailing spaces allowed), if any.
    private static func integer(_ bytes: ArraySlice<UInt8>) -> Int? {
        let digits = bytes.prefix { (48...57).contains($0) }
        guard !digits.isEmpty, digits.count <= 18, bytes.dropFirst(digits.count).allSatisfy({ $0 == 32 || $0 == 9 })
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 48) }
    }

    /// The index just past the blank line that ends a head, if `bytes` holds one.
    private static func endOfHead(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }

    /// The `version` of a `200` answer's `{"room":..,"version":N}`.
    private static func version(in body: ArraySlice<UInt8>) -> Int? {
        let key = Array(#""version":"#.utf8)
        guard let range = body.firstRange(of: key) else { return nil }
        let digits = body[range.upperBound...].prefix { (48...57).contains($0) }
        return Int(String(decoding: digits, as: UTF8.self))
    }

    func closeSocket() {
        if connection >= 0 { close(connection) }
        connection = -1
        received.removeAll(keepingCapacity: true)
        request.removeAll(keepingCapacity: true)
        written = 0
    }

    /// Connects to the target: returns why it could not, or nil.
    private func open() -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(target.host, String(target.port), &hints, &found)
        guard resolved == 0, let info = found?.pointee else {
            return "cannot resolve \(target.host): \(String(cString: gai_strerror(resolved)))"
        }
        defer { freeaddrinfo(found) }
        let descriptor = socket(info.ai_family, info.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.ai_protocol)
        guard descriptor >= 0 else { return "cannot make a socket: \(String(cString: strerror(errno)))" }
        let seconds = Int(timeout.nanoseconds / 1_000_000_000)
        var limit = timeval(tv_sec: seconds, tv_usec: Int(timeout.nanoseconds % 1_000_000_000 / 1000))
        var one: Int32 = 1
        let limitSize = socklen_t(MemoryLayout<timeval>.size)
        // Bounds the connect (a blocking one, before the socket becomes non-blocking for the loop).
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, limitSize)
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if let sourceAddress, info.ai_family == AF_INET {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            _ = inet_pton(AF_INET, sourceAddress, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if bound != 0 {
                close(descriptor)
                return "cannot bind to \(sourceAddress): \(String(cString: strerror(errno)))"
            }
        }
        guard connect(descriptor, info.ai_addr, info.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            return "cannot connect to \(target.hostHeader): \(reason)"
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        connection = descriptor
        connections += 1
        return nil
    }
}
