import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import Testing
import LockstepTestSupport

/// Revert and recordings with a real SQLite log, across restarts.
@Suite(.timeLimit(.minutes(3))) struct TimeTravelDurabilityTests {
    let transport = sharedTransport

    /// Adds `count` items, one version each; returns the state of every version, version 0 first.
    private func addItems(_ count: Int, in server: SyncServer) async throws -> [JSON] {
        let client = try await TestClient.connect(server, using: transport)
        var states = [try await client.nextSnapshotState()]
        for index in 1...count {
            client.send(.action(id: "a\(index)", action: ["type": "add", "title": .string("t\(index)")]))
            try await client.catchUp(to: states.count)
            states.append(await client.state)
        }
        return states
    }

    private func reply(to id: String, from client: TestClient) async throws -> ServerMessage {
        try await client.next { message in
            switch message {
            case .error(let replyID, _, _), .ack(let replyID, _): replyID == id
            default: false
            }
        }
    }

    @Test func aRevertSurvivesARestartAndIsUndoneAfterIt() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var states: [JSON] = []
        try await withStoredServer(in: directory, app: .todos, configure: { $0.snapshotInterval = 4 }) { server in
            states = try await addItems(6, in: server)
            let client = try await TestClient.connect(server, using: transport)
            client.send(.revert(id: "t", to: 2))
            #expect(try await reply(to: "t", from: client) == .ack(id: "t", version: 7))
        }
        try await withStoredServer(in: directory, app: .todos, configure: { $0.resumeWindow = 1 }) { server in
            let client = try await TestClient.connect(server, using: transport)
            #expect(try await client.nextSnapshotState() == states[2])
            // The replayed history knows the revert: undo takes it back, naming its version.
            client.send(.undo(id: "u"))
            let undo = try await client.next { $0.isPatch(version: 8) }
            guard case .patch(_, _, let cause, _, _) = undo else { return }
            #expect(cause.untimed == Cause(kind: .undo, client: "c1", id: "u", of: 7))
            #expect(try await reply(to: "u", from: client) == .ack(id: "u", version: 8))
            #expect(await client.state == states[6])

            // Further back than memory holds after the restart: rebuilt from the log's inverse patches.
            client.send(.revert(id: "back", to: 1))
            #expect(try await reply(to: "back", from: client) == .ack(id: "back", version: 9))
            #expect(await client.state == states[1])
            let past = try await HTTPGet(port: server.port, path: "/rooms/test?version=3").json
            #expect(past == ["room": "test", "version": 3, "state": states[3]])
        }
    }

    @Test func theLogBoundsWhatCanBeRebuiltAfterARestart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(
            in: directory, app: .todos,
            configure: {
                $0.snapshotInterval = 5
                $0.keepHistory = 3
                $0.resumeWindow = 2
            }
        ) { server in
            _ = try await addItems(20, in: server)
        }
        try await withStoredServer(in: directory, app: .todos, configure: { $0.resumeWindow = 2 }) { server in
            // The snapshot at 20 keeps changes 18 to 20: versions 17 to 20 can be rebuilt.
            let client = try await TestClient.connect(server, using: transport)
            _ = try await client.nextSnapshotState()
            client.send(.revert(id: "gone", to: 16))
            guard case .error(_, "unknown_version", _) = try await reply(to: "gone", from: client) else {
                Issue.record("expected unknown_version")
                return
            }
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test?version=16").status == 404)
            let log = try await HTTPGet(port: server.port, path: "/rooms/test/log")
            #expect(log.lines.first?["version"] == 17)
            #expect(log.lines.count == 4)
            client.send(.revert(id: "kept", to: 17))
            #expect(try await reply(to: "kept", from: client) == .ack(id: "kept", version: 21))
            #expect(await client.state["items"]?.arrayValue?.count == 17)
        }
    }

    @Test func theLogStreamsFromTheDatabaseAndMemory() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, app: .todos, configure: { $0.snapshotInterval = 100 }) { server in
            _ = try await addItems(30, in: server)
        }
        try await withStoredServer(in: directory, app: .todos, configure: { $0.resumeWindow = 5 }) { server in
            let client = try await TestClient.connect(server, using: transport)
            _ = try await client.nextSnapshotState()
            for index in 31...40 {
                client.send(.action(id: "a\(index)", action: ["type": "toggle", "id": .int(index - 30)]))
            }
            try await client.catchUp(to: 40)
            let lines = try await HTTPGet(port: server.port, path: "/rooms/test/log?after=10").body.split(separator: 10)
            #expect(lines.count == 31)
            var state = try #require(try JSON(parsing: Array(lines[0]))["state"])
            for (offset, line) in lines.dropFirst().enumerated() {
                guard case .patch(let version, let ops, _, _, _) = try ServerMessage(json: JSON(parsing: Array(line)))
                else {
                    Issue.record("line \(offset + 1) is not a patch")
                    return
                }
                #expect(version == 11 + offset)
                try ops.apply(to: &state)
            }
            #expect(state == (await client.state))
        }
    }
}
