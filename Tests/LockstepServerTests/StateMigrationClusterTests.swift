import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Rooms stored in PostgreSQL by version 1 of an app, loaded by every server of a cluster running version 2.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct StateMigrationClusterTests {
    @Test func everyServerLoadsAVersion1RoomMigratedAlike() async throws {
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let old = try await clusterNode(
            on: postgres, app: Shelf.v1, operationTimeout: .seconds(20), configure: { $0.snapshotInterval = 2 })
        let writer = try await TestClient.connect(old, using: sharedTransport)
        for title in ["Dune", "Emma", "Ulysses"] { writer.send(.action(id: title, action: Shelf.add(title))) }
        try await writer.catchUp(to: 3)
        old.shutdown()

        var servers: [SyncServer] = []
        defer { for server in servers { server.shutdown() } }
        for _ in 0..<2 {
            servers.append(try await clusterNode(on: postgres, app: Shelf.v2, operationTimeout: .seconds(20)))
        }
        // Both servers load the room at once: each migrates it, to the same state and epoch.
        let (one, two) = (servers[0], servers[1])
        async let first = TestClient.connect(one, using: sharedTransport)
        async let second = TestClient.connect(two, using: sharedTransport)
        let clients = try await [first, second]
        var epochs: Set<String> = []
        for client in clients {
            let snapshot = try await client.nextJSON(type: "snapshot")
            #expect(snapshot["version"] == 3)
            #expect(snapshot["state"] == Shelf.migrated(["Dune", "Emma", "Ulysses"]))
            epochs.insert(try #require(snapshot["epoch"]?.stringValue))
        }
        #expect(epochs.count == 1, "one epoch per room across servers")
        clients[1].send(.action(id: "r", action: ["markRead": ["index": 0]]))
        _ = try await clients[1].next { $0 == .ack(id: "r", version: 4) }
        try await clients[0].catchUp(to: 4)
        #expect(await clients[0].state == Shelf.migrated(["Dune", "Emma", "Ulysses"], read: [0]))

        // A server started later finds the room stored in the new shape.
        servers.append(try await clusterNode(on: postgres, app: Shelf.v2, operationTimeout: .seconds(20)))
        let room = try #require(try await HTTPGet(port: servers[2].port, path: "/rooms/test").json)
        #expect(room["version"] == 4)
        #expect(room["state"] == Shelf.migrated(["Dune", "Emma", "Ulysses"], read: [0]))
        #expect(try postgres.sql("SELECT state_version FROM snapshots WHERE room = 'test'") == "2")
    }

    @Test func aRoomMadeUnderVersion2InTheClusterIsNotMigratedAgain() async throws {
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let first = try await clusterNode(on: postgres, app: Shelf.v2, operationTimeout: .seconds(20))
        let client = try await TestClient.connect(first, using: sharedTransport)
        let epoch = try #require(try await client.nextJSON(type: "snapshot")["epoch"]?.stringValue)
        client.send(.action(id: "a", action: Shelf.add("Dune")))
        client.send(.action(id: "r", action: ["markRead": ["index": 0]]))
        _ = try await client.next { $0 == .ack(id: "r", version: 2) }
        first.shutdown()

        let second = try await clusterNode(on: postgres, app: Shelf.v2, operationTimeout: .seconds(20))
        defer { second.shutdown() }
        let room = try #require(try await HTTPGet(port: second.port, path: "/rooms/test").json)
        #expect(room["state"] == Shelf.migrated(["Dune"], read: [0]))
        #expect(room["epoch"]?.stringValue == epoch)
    }
}
