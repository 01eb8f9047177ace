import Synchronization
@testable import LockstepTransport
#if canImport(Glibc)
import Glibc
#endif

/// A body whose pieces the test pushes from its own thread; `next` answers `.later` while none is queued.
final class PieceQueue: Sendable {
    private struct State {
        var pieces: [[UInt8]] = []
        var finished = false
        var laters = 0
    }

    private let state = Mutex(State())
    /// Set once, on the loop, right after init.
    nonisolated(unsafe) var stream: HTTPBodyStream?

    /// How many times `next` answered `.later`.
    var laters: Int { state.withLock { $0.laters } }

    func next() -> HTTPBodyStream.Piece {
        state.withLock { state in
            if !state.pieces.isEmpty { return .bytes(state.pieces.removeFirst()) }
            if state.finished { return .end }
            state.laters += 1
            return .later
        }
    }

    /// Queues `piece` (or the end) and wakes the transport. Any thread.
    func push(_ piece: [UInt8]?) {
        state.withLock { state in
            if let piece { state.pieces.append(piece) } else { state.finished = true }
        }
        stream?.resume()
    }
}

/// Answers `/later?id=N` with a deferred response whose promise the test completes, `/now` with a promise completed
/// before `respond` returns, `/stream?id=N` with a `PieceQueue` body, and anything else at once.
// @unchecked Sendable: the delegate methods run on the loop thread; the shared tables are Mutexes.
final class DeferringDelegate: WebSocketServerDelegate, @unchecked Sendable {
    let recorder = Recorder()
    let promises = Mutex<[String: HTTPPromise]>([:])
    let queues = Mutex<[String: PieceQueue]>([:])

    func refusal(of request: UpgradeRequest) -> HTTPResponse? { nil }
    func connectionDidOpen(_ connection: WebSocketConnection) {}
    func connection(_ connection: WebSocketConnection, didReceive message: InboundMessage) {}
    func connectionDidDrain(_ connection: WebSocketConnection) {}
    func connectionDidClose(_ connection: WebSocketConnection) {}

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let id = request.query["id"] ?? ""
        defer { recorder.record(.http(request.method + " " + request.path + " " + id)) }
        switch request.path {
        case "/later":
            let promise = HTTPPromise()
            promises.withLock { $0[id] = promise }
            return .deferred(promise)
        case "/again":
            // Every request gets the same promise: only the first may wait on it.
            return .deferred(promises.withLock { promises in
                if promises["again"] == nil { promises["again"] = HTTPPromise() }
                return promises["again"]!
            })
        case "/now":
            let promise = HTTPPromise()
            promise.complete(with: HTTPResponse(status: 200, text: "at once"))
            return .deferred(promise)
        case "/stream":
            let queue = PieceQueue()
            let stream = HTTPBodyStream { queue.next() }
            queue.stream = stream
            queues.withLock { $0[id] = queue }
            return HTTPResponse(status: 200, contentType: "text/plain", stream: stream)
        default:
            return HTTPResponse(status: 200, text: "plain")
        }
    }

    func promise(_ id: String) -> HTTPPromise? { promises.withLock { $0[id] } }
    func queue(_ id: String) -> PieceQueue? { queues.withLock { $0[id] } }
}

/// Runs `body` on the server's loop thread and returns its result.
func onLoop<T: Sendable>(_ server: WebSocketServer, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        server.loop.execute { continuation.resume(returning: body()) }
    }
}

/// Waits (bounded by the caller's `withTimeout`) until `condition`, checked on the loop, holds.
func waitOnLoop(_ server: WebSocketServer, until condition: @escaping @Sendable () -> Bool) async throws {
    while !(await onLoop(server, condition)) {
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// CPU time the calling thread has used, in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

extension RawSocket {
    /// Sends a GET for `target` on this (keep-alive) connection.
    func get(_ target: String, method: String = "GET") {
        write(Array("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
    }

    /// Whether bytes (or EOF) are waiting to be read, without blocking.
    var hasInput: Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return !pending.isEmpty || poll(&descriptor, 1, 0) > 0
    }

    /// Reads exactly `count` body bytes after `readHead()`.
    func readBody(count: Int) -> [UInt8] {
        while pending.count < count {
            let chunk = readOnce()
            if chunk.isEmpty { break }
            pending += chunk
        }
        let body = Array(pending.prefix(count))
        pending.removeFirst(body.count)
        return body
    }

    /// Reads one chunk of a chunked body: its payload, empty for the final chunk, nil if the connection ended first.
    func readChunk() -> [UInt8]? {
        guard let line = readLine(), let size = Int(line, radix: 16) else { return nil }
        let payload = readBody(count: size + 2)
        guard payload.count == size + 2, payload.suffix(2) == [13, 10] else { return nil }
        return Array(payload.prefix(size))
    }

    /// Reads up to CRLF; nil on EOF.
    private func readLine() -> String? {
        while true {
            if let index = pending.firstIndex(of: 10), index > 0, pending[index - 1] == 13 {
                let line = String(decoding: pending[..<(index - 1)], as: UTF8.self)
                pending.removeFirst(index + 1)
                return line
            }
            let chunk = readOnce()
            if chunk.isEmpty { return nil }
            pending += chunk
        }
    }

    /// Whether the server closed the connection (EOF, not a timeout).
    func readsEOF() -> Bool {
        pending.isEmpty && readOnce().isEmpty
    }
}
