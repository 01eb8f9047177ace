import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepStorage
import Testing
import LockstepTestSupport

/// Rooms kept in a real SQLite file across server restarts.
@Suite(.timeLimit(.minutes(3))) struct DurabilityTests {
    @Test func changesAndUndoSurviveARestart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, app: .todos, configure: { $0.snapshotInterval = 7 }) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            for index in 1...20 {
                client.send(.action(id: "a\(index)", action: ["type": "add", "title": .string("t\(index)")]))
            }
            client.send(.undo(id: "u"))
            _ = try await client.next { $0 == .ack(id: "u", version: 21) }
        }
        try await withStoredServer(in: directory, app: .todos) { server in
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["version"] == 21)
            #expect(room["state"]?["items"]?.arrayValue?.count == 19)
            let client = try await TestClient.connect(server, using: sharedTransport)
            let snapshot = try await client.next()
            #expect(
                snapshot == .snapshot(room: "test", you: "c1", version: 21, state: room["state"]!, undo: 19, redo: 1))
            client.send(.redo(id: "r"))
            _ = try await client.next { $0 == .ack(id: "r", version: 22) }
            client.send(.undo(id: "u1"))
            client.send(.undo(id: "u2"))
            _ = try await client.next { $0 == .ack(id: "u2", version: 24) }
            try await client.catchUp(to: 24)
            #expect(await client.state["items"]?.arrayValue?.count == 18)
        }
    }

    @Test func clientsResumeAcrossARestart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            for index in 1...10 { client.send(.action(id: "a\(index)", action: ["type": "increment"])) }
            try await client.catchUp(to: 10)
        }
        try await withStoredServer(in: directory) { server in
            let client = try await TestClient.connect(server, query: "since=6", using: sharedTransport)
            #expect(try await client.next() == .resume(room: "test", you: "c1", version: 6))
            for version in 7...10 { #expect(try await client.next().isPatch(version: version)) }
        }
    }

    @Test func aRoomNeverUsedIsStill404AndANewOneStartsAtZero() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory) { server in
            #expect(try await HTTPGet(port: server.port, path: "/rooms/nobody").status == 404)
            let client = try await TestClient.connect(server, room: "fresh", using: sharedTransport)
            #expect(try await client.next().isSnapshot)
        }
    }

    /// A client joining while changes are being written gets a snapshot of the newest state, ahead of what has
    /// been broadcast: the patches up to its snapshot must not reach it, and every later one must.
    @Test func clientsJoiningWhileChangesAreWrittenSeeNoGapAndNoRepeat() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, configure: { $0.rateLimit = 0 }) { server in
            let driver = try await TestClient.connect(server, using: sharedTransport)
            let total = 3_000
            var joiners: [TestClient] = []
            for index in 1...total {
                driver.send(.action(id: "a\(index)", action: ["type": "increment"]))
                if index % 150 == 0 { joiners.append(try await TestClient.connect(server, using: sharedTransport)) }
            }
            try await driver.catchUp(to: total)
            for client in joiners {
                try await client.catchUp(to: total)
                #expect(await client.gaps.isEmpty)
                #expect(await client.state == ["count": .int(total)])
            }
        }
    }

    @Test func aSecondServerOnTheSameDirectoryRefusesToStart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory) { _ in
            var configuration = ServerConfiguration(app: .counter)
            configuration.port = 0
            let error = #expect(throws: ServerError.self) {
                _ = try SyncServer(configuration: configuration, storage: try storage(in: directory, app: .counter))
            }
            #expect(error == .dataDirectoryLocked(path: directory))
            #expect(error?.message.contains("another lockstep server is using the data directory \(directory)") == true)
        }
    }

    @Test func aDataPathThatIsAFileIsAClearErrorAtStart() throws {
        let file = NSTemporaryDirectory() + "lockstep-file-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        defer { try? FileManager.default.removeItem(atPath: file) }
        var configuration = ServerConfiguration(app: .counter)
        configuration.port = 0
        #expect(throws: ServerError.self) {
            _ = try SyncServer(configuration: configuration, storage: try storage(in: file, app: .counter))
        }
    }
}
