import LockstepApps
import LockstepClient
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import LockstepTransport
import Testing

/// A server that goes silent without closing (its host down, a link cut, a NAT that forgot the connection) is
/// noticed by the silence limit: the client reconnects and what it sent is applied once, not waited for forever.
@Suite(.timeLimit(.minutes(2))) struct SilentServerTests {
    @Test func aClientReconnectsWhenItsServerGoesSilentAndAppliesItsRequestOnce() async throws {
        try await withServer(app: .counter) { server in
            let relay = try DelayRelay(targetPort: server.port, delay: .zero)
            defer { relay.stop() }
            let transport = try WebSocketClient(silenceLimit: .milliseconds(600))
            defer { transport.shutdown() }
            let client = try RoomClient(
                url: "ws://127.0.0.1:\(relay.port)/rooms/silent",
                reconnect: ReconnectPolicy(initialDelay: .milliseconds(50), maxDelay: .milliseconds(200)),
                transport: transport)
            try await client.connect()
            let statuses = Task {
                await client.updates.reduce(into: [ConnectionStatus]()) {
                    if case .status(let status) = $1.change { $0.append(status) }
                }
            }
            #expect(try await client.send(action: ["type": "increment"]) == 1)

            // Idle for several limits, the pings are answered: the connection stays.
            try await Task.sleep(for: .seconds(2))
            #expect(await client.status == .live)
            #expect(try await client.send(action: ["type": "increment"]) == 2)

            // The path goes silent both ways with a request in flight: the client gives the connection up.
            relay.holdReplies()
            let sent = Task { try await client.send(action: ["type": "increment"]) }
            try await waitUntil("the silent connection to be given up") { await client.status != .live }
            relay.releaseReplies()
            #expect(try await sent.value == 3)
            #expect(try await fetchRoom(port: server.port, room: "silent").state == ["count": 3])
            await client.close()
            let seen = await statuses.value
            #expect(seen.contains { $0 != .live && $0 != .closed }, "it gave the connection up")
            #expect(seen.last { $0 != .closed } == .live, "it reconnected")
        }
    }
}
