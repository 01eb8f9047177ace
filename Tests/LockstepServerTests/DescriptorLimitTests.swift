import Foundation
import LockstepCore
import LockstepJSON
import LockstepTestSupport
import Testing

/// A server whose process runs out of file descriptors says so, keeps serving the clients it has, and accepts again
/// once descriptors come free. The server runs as a child with `RLIMIT_NOFILE` lowered, soft and hard, so that the
/// limit is reached with a few dozen sockets.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DescriptorLimitTests {
    @Test func byDefaultTheServerAcceptsWhatItsDescriptorsAllowWithoutANotice() async throws {
        let limit = 48
        let server = try await ServerProcess.start(
            arguments: ["--app", "counter", "--memory", "--rate-limit", "0"], descriptorLimit: limit)
        defer { server.terminate() }
        #expect(server.startupOutput.contains("soft=\(limit)"))
        #expect(!server.startupOutput.contains("fewer than --max-connections"), "\(server.startupOutput)")
        // The connection limit is what the descriptors allow: handshakes past it are refused with 503 before the
        // process runs out.
        var clients: [TestClient] = []
        while clients.count < limit {
            guard let client = try? await TestClient.connect(port: server.port, room: "full", using: sharedTransport),
                (try? await client.next { $0.isSnapshot }) != nil
            else { break }
            clients.append(client)
        }
        #expect(clients.count > limit / 2 && clients.count < limit)
        let refusal = try await HTTPGet(
            port: server.port, path: "/rooms/full",
            headers: ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="])
        #expect(refusal.status == 503)
        #expect(refusal.text.contains("at its limit of"))
        let log = try await offThePool { server.readOutput(until: "refused", seconds: 1) }
        #expect(!log.contains("out of file descriptors"))
        for client in clients { client.close() }
    }

    @Test func runningOutOfDescriptorsIsSaidAndTheServerRecovers() async throws {
        let limit = 48
        // More connections than descriptors, asked for: the descriptors run out first.
        let server = try await ServerProcess.start(
            arguments: ["--app", "counter", "--memory", "--rate-limit", "0", "--max-connections", "20000"],
            descriptorLimit: limit)
        defer { server.terminate() }
        #expect(server.startupOutput.contains("file descriptor limit"))
        #expect(server.startupOutput.contains("soft=\(limit)"))
        #expect(server.startupOutput.contains("hard=\(limit)"))
        #expect(server.startupOutput.contains("fewer than --max-connections"))

        // Fill the server: each client holds one of its descriptors, until one is refused.
        var clients: [TestClient] = []
        var refused = false
        for _ in 0..<limit {
            do {
                let client = try await TestClient.connect(port: server.port, room: "full", using: sharedTransport)
                _ = try await client.next { $0.isSnapshot }
                clients.append(client)
            } catch {
                refused = true
                break
            }
        }
        #expect(refused, "a server limited to \(limit) descriptors accepted \(clients.count) clients")
        #expect(clients.count > limit / 2)
        let log = try await offThePool { server.readOutput(until: "refused", seconds: 10) }
        #expect(log.contains("out of file descriptors (EMFILE)"))
        #expect(log.contains("soft \(limit), hard \(limit)"))

        // The clients it has are still served: an action is acked and reaches the others.
        let writer = try #require(clients.first)
        writer.send(.action(id: "a", action: ["type": "increment"]))
        #expect(try await writer.next { $0.isAck } == .ack(id: "a", version: 1))
        #expect(try await clients.last?.next { $0.isPatch(version: 1) } != nil)

        // Descriptors come free: new clients are accepted again, and the refusals were counted.
        for client in clients.suffix(4) { client.close() }
        clients.removeLast(4)
        // Until the server has seen the closes, a request may itself be refused for want of a descriptor.
        try await waitForMetric("lockstep_connections", toReachAtMost: clients.count, port: server.port)
        let late = try await TestClient.connect(port: server.port, room: "full", using: sharedTransport)
        #expect(try await late.nextSnapshotState() == ["count": 1])
        #expect(try await metric("lockstep_out_of_descriptors_total", port: server.port) >= 1)
        #expect(try await metric("lockstep_descriptor_limit", port: server.port) == limit)
    }
}
