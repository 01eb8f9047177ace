import Foundation
import LockstepCore
import LockstepJSON
import LockstepTransport
import Testing
import LockstepTestSupport

/// What a killed server process keeps: every acknowledged change.
@Suite(.timeLimit(.minutes(3))) struct CrashTests {
    @Test func acknowledgedActionsSurviveKill9() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-kill-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory, "--rate-limit", "0"])
        let url = "ws://127.0.0.1:\(server.port)/rooms/test"
        let socket = try await WebSocket.connect(url, using: sharedTransport)

        let total = 10_000
        var lastAck = 0
        var next = 1
        var messages = socket.messages.makeAsyncIterator()
        // Keep 200 actions in flight; kill the server somewhere in the middle of the stream.
        func sendUpTo(_ limit: Int) {
            while next <= min(limit, total) {
                socket.send(ClientMessage.action(id: "a\(next)", action: ["type": "increment"]).json.serialized())
                next += 1
            }
        }
        sendUpTo(200)
        while let message = await messages.next() {
            guard case .text(let bytes) = message,
                case .ack(_, let version) = try ServerMessage(json: JSON(parsing: bytes))
            else { continue }
            lastAck = max(lastAck, version)
            if lastAck >= 3_000 {
                server.kill9()
                break
            }
            sendUpTo(lastAck + 200)
        }
        #expect(lastAck >= 3_000)

        let restarted = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory])
        defer { restarted.terminate() }
        let room = try #require(try await HTTPGet(port: restarted.port, path: "/rooms/test").json)
        let version = try #require(room["version"]?.intValue)
        #expect(version >= lastAck, "an acknowledged change was lost")
        #expect(room["state"] == ["count": .int(version)])

        let client = try await TestClient.connect(port: restarted.port, using: sharedTransport)
        client.send(.undo(id: "u"))
        #expect(try await client.next { $0.isAck } == .ack(id: "u", version: version + 1))
        try await client.catchUp(to: version + 1)
        #expect(await client.state == ["count": .int(version - 1)])
    }
}
