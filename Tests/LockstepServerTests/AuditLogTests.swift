import Foundation
import InMemoryLogging
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import Logging
import Testing
import LockstepTestSupport

/// The audit trail: connections and every change at debug, rooms loaded and evicted at info.
@Suite(.timeLimit(.minutes(1))) struct AuditLogTests {
    @Test func debugLogsEveryConnectionAndChangeWithItsCauseAndPatch() async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "lockstep", factory: { _ in handler })
        logger.logLevel = .debug
        var configuration = ServerConfiguration(app: .json)
        configuration.port = 0
        configuration.auditLimitBytes = 64
        let server = try SyncServer(configuration: configuration, logger: logger)
        defer { server.shutdown() }

        let client = try await TestClient.connect(server, query: "name=alice", using: sharedTransport)
        let long = String(repeating: "é", count: 100)
        client.send(.action(id: "a1", action: ["type": "patch", "ops": [["op": "add", "path": "/x", "value": 1]]]))
        let longOp: JSON = ["op": "add", "path": "/y", "value": .string(long)]
        client.send(.action(id: "a2", action: ["type": "patch", "ops": [longOp]]))
        client.send(.undo(id: "u"))
        _ = try await client.next { $0 == .ack(id: "u", version: 3) }
        client.close()
        try await eventually { handler.entries.contains { $0.message == "connection closed" } }

        let opened = try #require(handler.entries.first { $0.message == "connection opened" })
        #expect(opened.level == .debug)
        #expect(opened.metadata["room"] == "test")
        #expect(opened.metadata["client"] == "c1")
        #expect(opened.metadata["name"] == "alice")
        #expect(opened.metadata["peer"] == "127.0.0.1")

        let changes = handler.entries.filter { $0.message == "change" }
        #expect(changes.map { $0.metadata["version"] } == ["1", "2", "3"])
        #expect(changes[0].metadata["cause"] == "action")
        #expect(changes[0].metadata["client"] == "c1")
        #expect(changes[0].metadata["id"] == "a1")
        #expect(changes[0].metadata["action"] == #"{"type":"patch","ops":[{"op":"add","path":"/x","value":1}]}"#)
        #expect(changes[0].metadata["patch"] == #"[{"op":"add","path":"/x","value":1}]"#)
        #expect(changes[0].metadata["name"] == "alice")
        #expect(changes[0].metadata["at"].flatMap { Int("\($0)") }.map { $0 > 1_700_000_000_000 } == true)
        // Cut past the limit, at a character boundary, saying how much is left out.
        let cut = try #require(changes[1].metadata["patch"]?.description)
        #expect(cut.hasPrefix(#"[{"op":"add","path":"/y","value":"éé"#))
        #expect(cut.hasSuffix(" more bytes)"))
        #expect(cut.utf8.count < 100)
        #expect(changes[2].metadata["cause"] == "undo")
        #expect(changes[2].metadata["of"] == "2")
        #expect(changes[2].metadata["patch"] == #"[{"op":"remove","path":"/y"}]"#)
    }

    @Test func infoLogsRoomsLoadedAndEvictedButNoChanges() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let handler = InMemoryLogHandler()
        var configuration = ServerConfiguration(app: .counter)
        configuration.port = 0
        configuration.roomIdle = .milliseconds(100)
        let logger = Logger(label: "lockstep", factory: { _ in handler })
        let server = try SyncServer(
            configuration: configuration, storage: try storage(in: directory, app: .counter), logger: logger)
        defer { server.shutdown() }

        let client = try await TestClient.connect(server, using: sharedTransport)
        client.send(.action(id: "a", action: ["type": "increment"]))
        _ = try await client.next { $0.isAck }
        client.close()
        try await eventually { handler.entries.contains { $0.message == "evicted an idle room" } }
        _ = try await HTTPGet(port: server.port, path: "/rooms/test")
        let loaded = try #require(handler.entries.first { $0.message == "loaded a room" })
        #expect(loaded.level == .info)
        #expect(loaded.metadata["room"] == "test")
        #expect(loaded.metadata["version"] == "1")
        #expect(!handler.entries.contains { $0.level < .info })
    }

    private func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TestClientError.timedOut }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
