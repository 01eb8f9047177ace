import Clocks
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTransport
import Testing

/// A protocol client for tests: real WebSocket, bounded waits, and the mirror a real client keeps.
///
/// Every wait has a deadline, so a message that never comes fails the test instead of hanging it. The deadlines are
/// upper bounds (a message normally comes within milliseconds), generous for a loaded two-core machine.
final class TestClient: Sendable {
    let socket: WebSocket
    private let inbox: Inbox

    private init(socket: WebSocket) {
        self.socket = socket
        inbox = Inbox()
        let inbox = self.inbox
        Task {
            for await message in socket.messages { await inbox.push(message) }
            await inbox.finish()
        }
    }

    static func connect(
        _ server: SyncServer, room: String = "test", query: String = "", using transport: WebSocketClient
    ) async throws -> TestClient {
        try await connect(port: server.port, room: room, query: query, using: transport)
    }

    static func connect(
        host: String = "127.0.0.1", port: Int, room: String = "test", query: String = "",
        using transport: WebSocketClient
    ) async throws -> TestClient {
        let url = "ws://\(host):\(port)/rooms/\(room)" + (query.isEmpty ? "" : "?\(query)")
        return TestClient(socket: try await WebSocket.connect(url, using: transport))
    }

    func send(_ message: ClientMessage) {
        socket.send(message.json.serialized())
    }

    func sendRaw(_ text: String) {
        socket.send(Array(text.utf8))
    }

    /// The next message, decoded; fails the test after `timeout`.
    func next(
        timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ServerMessage {
        try await nextMessage(timeout: timeout, sourceLocation: sourceLocation).message
    }

    /// The next message as JSON, for fields ``ServerMessage`` does not keep (`epoch`, `seq`, `duplicate`).
    func nextJSON(
        timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSON {
        try await nextMessage(timeout: timeout, sourceLocation: sourceLocation).json
    }

    /// The next text frame, kept, applied to the mirror, and decoded both ways.
    private func nextMessage(
        timeout: Duration, sourceLocation: SourceLocation
    ) async throws -> (json: JSON, message: ServerMessage) {
        guard let message = await inbox.next(timeout: timeout) else {
            // A connection the server closed ends the wait at once; a caller expecting that catches `closed`.
            if await inbox.finished { throw TestClientError.closed }
            Issue.record("no message within \(timeout)", sourceLocation: sourceLocation)
            throw TestClientError.timedOut
        }
        guard case .text(let bytes) = message else { throw TestClientError.notText }
        await inbox.keep(bytes)
        let json = try JSON(parsing: bytes)
        let decoded = try ServerMessage(json: json)
        await inbox.mirror(decoded)
        return (json, decoded)
    }

    /// Reads until a message of `type` arrives, as JSON.
    func nextJSON(type: String, timeout: Duration = .seconds(30)) async throws -> JSON {
        while true {
            let json = try await nextJSON(timeout: timeout)
            if json["type"]?.stringValue == type { return json }
        }
    }

    /// Reads until a message matches, applying everything it reads to the mirror.
    func next(
        timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
        where matches: (ServerMessage) -> Bool
    ) async throws -> ServerMessage {
        while true {
            let message = try await next(timeout: timeout, sourceLocation: sourceLocation)
            if matches(message) { return message }
        }
    }

    /// Reads until the mirror reaches `version`.
    func catchUp(to version: Int, timeout: Duration = .seconds(30)) async throws {
        while await inbox.version < version {
            _ = try await next(timeout: timeout)
        }
    }

    /// Reads until the connection ends or nothing comes for `timeout`, without failing the test; returns what it read.
    func drain(timeout: Duration) async -> [ServerMessage] {
        var messages: [ServerMessage] = []
        while let message = await inbox.next(timeout: timeout) {
            guard case .text(let bytes) = message, let json = try? JSON(parsing: bytes),
                let decoded = try? ServerMessage(json: json)
            else { continue }
            await inbox.keep(bytes)
            await inbox.mirror(decoded)
            messages.append(decoded)
        }
        return messages
    }

    /// The connection closed, with this code, before `timeout`.
    func closeCode(timeout: Duration = .seconds(30)) async -> UInt16? {
        while await inbox.next(timeout: timeout) != nil {}
        return socket.closeCode
    }

    var state: JSON { get async { await inbox.state } }
    var version: Int { get async { await inbox.version } }
    /// Every version this client saw, in order: contiguous unless a snapshot restarted it.
    var gaps: [String] { get async { await inbox.gaps } }

    /// How many snapshots this client received: more than one means the server resynchronised it.
    var snapshots: Int { get async { await inbox.snapshots } }
    /// Every text message read so far, byte for byte, in order.
    var frames: [[UInt8]] { get async { await inbox.frames } }

    func close() {
        socket.close()
    }

    /// Sends small `json` changes to `server`, each followed by `clock` (the server's) moving past its stall timeout, until the server
    /// has dropped some reader's queue (`lockstep_dropped_queues_total`): a reader is found stalled only when a
    /// change reaches the stream, and the socket buffers can take the first ones. Returns how many changes it sent;
    /// fails the test after 200. Its own patch comes back through the same stream, so each change has met every
    /// reader when it arrives.
    func trickleUntilAQueueIsDropped(on server: SyncServer, clock: TestClock<Duration>) async throws -> Int {
        var trickle = 0
        while try await metric("lockstep_dropped_queues_total", port: server.port) < 1 {
            trickle += 1
            try #require(trickle <= 200, "no reader's queue was dropped")
            let version = await self.version
            let op: JSON = ["op": "add", "path": "/trickle", "value": .int(trickle)]
            send(.action(id: "t\(trickle)", action: ["type": "patch", "ops": [op]]))
            try await catchUp(to: version + 1)
            await clock.advance(by: server.configuration.stallTimeout + .milliseconds(1))
        }
        return trickle
    }
}

enum TestClientError: Error {
    case timedOut
    /// The connection closed, and every message before was read.
    case closed
    case notText
}

/// Collects a socket's messages and keeps the mirror of the room's state.
private actor Inbox {
    private var buffer: [InboundMessage] = []
    private var waiter: (id: Int, continuation: CheckedContinuation<InboundMessage?, Never>)?
    private var waiterCount = 0
    private(set) var finished = false
    private(set) var state: JSON = .null
    private(set) var version = -1
    private(set) var gaps: [String] = []
    private(set) var snapshots = 0
    private(set) var frames: [[UInt8]] = []

    func push(_ message: InboundMessage) {
        if let waiter {
            self.waiter = nil
            waiter.continuation.resume(returning: message)
        } else {
            buffer.append(message)
        }
    }

    func finish() {
        finished = true
        waiter?.continuation.resume(returning: nil)
        waiter = nil
    }

    func next(timeout: Duration) async -> InboundMessage? {
        if !buffer.isEmpty { return buffer.removeFirst() }
        if finished { return nil }
        waiterCount += 1
        let id = waiterCount
        return await withCheckedContinuation { continuation in
            waiter = (id, continuation)
            Task {
                try? await Task.sleep(for: timeout)
                self.expire(id)
            }
        }
    }

    private func expire(_ id: Int) {
        guard let waiter, waiter.id == id else { return }
        self.waiter = nil
        waiter.continuation.resume(returning: nil)
    }

    func keep(_ frame: [UInt8]) {
        frames.append(frame)
    }

    func mirror(_ message: ServerMessage) {
        switch message {
        case .snapshot(_, _, let version, let state, _, _):
            snapshots += 1
            self.state = state
            self.version = version
        case .resume(_, _, let version):
            if version != self.version { gaps.append("resumed at \(version) from \(self.version)") }
        case .patch(let version, let ops, _, _, _):
            if version != self.version + 1 { gaps.append("patch \(version) after \(self.version)") }
            do {
                _ = try ops.apply(to: &state)
            } catch {
                gaps.append("patch \(version) does not apply: \(error)")
            }
            self.version = version
        default:
            break
        }
    }
}
