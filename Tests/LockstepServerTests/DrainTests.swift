import Foundation
import Glibc
import LockstepCore
import LockstepJSON
import LockstepTestSupport
import LockstepTransport
import Testing

/// `lockstep serve` leaving on SIGTERM (PROTOCOL.md, "A server that leaves"), as a real process over real sockets:
/// readiness off at once, every request read answered and stored, close 1001, exit 0 within `--drain-timeout`.
@Suite(.timeLimit(.minutes(3))) struct DrainTests {
    static let drainTimeout = Duration.seconds(3)
    /// What a busy machine may add to a drain's end: the signal waits for the loop, the exit for the scheduler. A drain
    /// that ignored its timeout would wait on the silent client below for ever, so any finite bound tells it apart.
    static let exitSlack = Duration.seconds(12)

    /// A client with a session streams increments while the server is told to stop.
    @Test func sigtermAnswersWhatWasReadStoresItClosesWith1001AndExitsZero() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-drain-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = [
            "--app", "counter", "--data", directory, "--rate-limit", "0", "--drain-timeout", "3s",
        ]
        let server = try await ServerProcess.start(arguments: arguments)
        let port = server.port
        let client = try await TestClient.connect(
            port: port, room: "drain", query: "session=s1", using: sharedTransport)
        _ = try await client.nextJSON(type: "snapshot")
        func increment(_ seq: Int) {
            client.sendRaw(#"{"type":"action","id":"a\#(seq)","seq":\#(seq),"action":{"type":"increment"}}"#)
        }
        // First a history, so the drain below starts in a room with versions behind it.
        let backlog = 2_000
        for seq in 1...backlog { increment(seq) }
        _ = try await client.next { if case .ack("a\(backlog)", _) = $0 { true } else { false } }
        let total = 3_000
        for seq in (backlog + 1)...(backlog + total) { increment(seq) }
        // The server is working through them when it is told to stop.
        _ = try await client.nextJSON(type: "ack")
        let signalled = ContinuousClock.now
        server.child.send(SIGTERM)
        // The server's exit is timed on its own, not after this client has read everything on a busy machine.
        let exit = Task {
            let status = await exitStatus(of: server)
            return (status, ContinuousClock.now - signalled)
        }

        // Every request the server read is answered, in order, and nothing else arrives before the 1001.
        let messages = await client.drain(timeout: .seconds(30))
        let acked = messages.compactMap { message -> String? in
            if case .ack(let id, _) = message { return id }
            return nil
        }
        let errors = messages.filter { if case .error = $0 { true } else { false } }
        #expect(errors.isEmpty)
        // How many more it read before the signal landed depends on the machine's scheduling, none included.
        #expect(acked.count < total, "the drain should stop the stream part way")
        // In order after the ack read above; none at all when the signal landed first (a range 1...0 would trap).
        #expect(acked == (0..<acked.count).map { "a\(backlog + 2 + $0)" })
        #expect(client.socket.closeCode == 1001)

        let (status, took) = await exit.value
        #expect(status == 0)
        #expect(took < Self.drainTimeout + Self.exitSlack, "the drain took \(took)")

        // Everything acknowledged is stored, and nothing that was not: the room counts exactly the acks (the first
        // ack was read above), and the session's mark is the last of them.
        let restarted = try await ServerProcess.start(arguments: arguments)
        defer { restarted.terminate() }
        let room = try await HTTPGet(port: restarted.port, path: "/rooms/drain")
        #expect(room.json?["state"]?["count"]?.intValue == backlog + acked.count + 1)
        let again = try await TestClient.connect(
            port: restarted.port, room: "drain", query: "session=s1", using: sharedTransport)
        let snapshot = try await again.nextJSON(type: "snapshot")
        #expect(snapshot["seq"]?.intValue == backlog + acked.count + 1)
        again.close()
    }

    /// A client that reads nothing while megabytes are queued for it keeps its close frame from leaving: the drain
    /// lasts its whole timeout, long enough to watch readiness from outside, and the server still exits 0 within it.
    @Test func readinessIsOffDuringTheDrainWhichEndsAtItsTimeout() async throws {
        let arguments = [
            "--app", "json", "--memory", "--rate-limit", "0", "--max-frame", "\(8 << 20)", "--queue-limit",
            "\(256 << 20)", "--drain-timeout", "3s",
        ]
        let server = try await ServerProcess.start(arguments: arguments)
        let port = server.port
        let silent = try await offThePool { () throws -> RawWebSocket in
            var socket = try RawWebSocket(port: port, path: "/rooms/big", receiveBufferBytes: 2_048)
            guard try socket.status() == 101 else { throw RawSocketError.failed("not upgraded") }
            return socket
        }
        defer { silent.close() }
        let writer = try await TestClient.connect(port: port, room: "big", using: sharedTransport)
        _ = try await writer.nextJSON(type: "snapshot")
        let value = String(repeating: "x", count: 4 << 20)
        for n in 1...3 {
            let add = #"{"op":"add","path":"/\#(n)","value":"\#(value)"}"#
            writer.sendRaw(#"{"type":"action","id":"b\#(n)","action":{"type":"patch","ops":[\#(add)]}}"#)
            _ = try await writer.nextJSON(type: "ack", timeout: .seconds(30))
        }

        let signalled = ContinuousClock.now
        server.child.send(SIGTERM)
        // The server's exit is timed on its own, not after this client has read everything on a busy machine.
        let exit = Task {
            let status = await exitStatus(of: server)
            return (status, ContinuousClock.now - signalled)
        }
        // A loaded machine may take its time to deliver the signal; the drain then lasts its timeout.
        var health = try await HTTPGet(port: port, path: "/healthz")
        while health.status == 200, ContinuousClock.now - signalled < .seconds(10) {
            health = try await HTTPGet(port: port, path: "/healthz")
        }
        #expect(health.status == 503)
        #expect(health.text.contains("shutting down"))
        let handshake = try await offThePool { () throws -> Int in
            var socket = try RawWebSocket(port: port, path: "/rooms/big")
            defer { socket.close() }
            return try socket.status()
        }
        #expect(handshake == 503)
        #expect(await writer.closeCode() == 1001)

        let (status, took) = await exit.value
        #expect(status == 0)
        #expect(took >= Self.drainTimeout - .milliseconds(500), "the drain took \(took): it did not wait")
        #expect(took < Self.drainTimeout + Self.exitSlack, "the drain took \(took)")
    }

    /// A client whose requests the server stopped reading, and which reads nothing itself for a while, still gets
    /// every answer and the 1001: the server reads and drops what arrives after its goodbye, so the socket ends
    /// without a reset. A reset made the client's kernel throw away the answers not yet delivered to it.
    @Test func aClientThatSentMoreAndReadsLateGetsEveryAnswerAndThe1001() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-drain-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The rate limit reads a burst's first hundred and leaves the rest in the server's socket, unread.
        let arguments = ["--app", "counter", "--data", directory, "--rate-limit", "100", "--drain-timeout", "20s"]
        let server = try await ServerProcess.start(arguments: arguments, mergingLog: true)
        let port = server.port
        // A small receive buffer: what the server answers waits in its own socket until this client reads.
        let socket = try await offThePool { () throws -> RawWebSocket in
            var socket = try RawWebSocket(
                port: port, path: "/rooms/late", timeoutSeconds: 60, receiveBufferBytes: 4_096)
            guard try socket.status() == 101 else { throw RawSocketError.failed("not upgraded") }
            return socket
        }
        defer { socket.close() }
        func increments(_ numbers: ClosedRange<Int>) -> [[UInt8]] {
            numbers.map { Array(#"{"type":"action","id":"a\#($0)","action":{"type":"increment"}}"#.utf8) }
        }
        try socket.send(all: increments(1...600))
        while try await HTTPGet(port: port, path: "/rooms/late").json?["version"]?.intValue ?? 0 == 0 {}
        server.child.send(SIGTERM)
        // The client reads only once the server has closed its connection, while its answers still wait to leave.
        let log = try await offThePool { server.readOutput(until: "connectionsLeft=0", seconds: 30) }
        #expect(log.contains("drained"), "\(log)")

        let (acked, closeCode) = try await offThePool { () throws -> ([Int], UInt16?) in
            var socket = socket
            var acked: [Int] = []
            while true {
                let frame = try socket.frame()
                if frame.opcode == 8 {
                    let code = frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : nil
                    return (acked, code)
                }
                let message = try JSON(parsing: frame.payload)
                if message["type"] == "ack", let id = message["id"]?.stringValue, let n = Int(id.dropFirst()) {
                    acked.append(n)
                }
            }
        }
        #expect(closeCode == 1001)
        #expect(!acked.isEmpty && acked == Array(1...acked.count), "acks \(acked.prefix(5))...\(acked.suffix(5))")
        #expect(await exitStatus(of: server) == 0)

        // Exactly what was acknowledged is stored; nothing sent after the goodbye was applied.
        let restarted = try await ServerProcess.start(arguments: arguments)
        defer { restarted.terminate() }
        let room = try await HTTPGet(port: restarted.port, path: "/rooms/late")
        #expect(room.json?["state"]?["count"]?.intValue == acked.count)
    }

    /// An idle server (no client) drains at once: it does not wait out its timeout.
    @Test func anIdleServerExitsAtOnce() async throws {
        let server = try await ServerProcess.start(arguments: ["--memory", "--drain-timeout", "30s"])
        let signalled = ContinuousClock.now
        server.child.send(SIGTERM)
        let status = await exitStatus(of: server)
        #expect(status == 0)
        // Well before its 30 s timeout, however busy the machine.
        #expect(ContinuousClock.now - signalled < .seconds(20))
    }

    private func exitStatus(of server: ServerProcess) async -> Int32 {
        (try? await offThePool { server.child.waitForExit() }) ?? -1
    }
}
