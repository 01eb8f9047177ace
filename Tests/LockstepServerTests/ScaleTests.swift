import Clocks
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTransport
import Testing
import LockstepTestSupport

/// Many clients at once: convergence, slow readers, a thousand sockets in one room; on either event loop.
@Suite(.timeLimit(.minutes(3))) struct ScaleTests {
    let transport = sharedTransport

    private static func randomAction(for app: String, using random: inout SplitMix64) -> ClientMessage {
        let id = "r\(random.next() % 1_000_000)"
        if random.next() % 6 == 0 { return random.next() % 2 == 0 ? .undo(id: id) : .redo(id: id) }
        switch app {
        case "counter":
            return .action(id: id, action: ["type": "add", "amount": .int(Int(random.next() % 21) - 10)])
        case "todos":
            switch random.next() % 4 {
            case 0, 1: return .action(id: id, action: ["type": "add", "title": .string("t\(random.next() % 100)")])
            case 2: return .action(id: id, action: ["type": "toggle", "id": .int(Int(random.next() % 10) + 1)])
            default: return .action(id: id, action: ["type": "remove", "id": .int(Int(random.next() % 10) + 1)])
            }
        default:
            let key = "k\(random.next() % 5)"
            let op: JSON =
                random.next() % 3 == 0
                ? ["op": "remove", "path": .string("/\(key)")]
                : ["op": "add", "path": .string("/\(key)"), "value": .int(Int(random.next() % 100))]
            return .action(id: id, action: ["type": "patch", "ops": [op]])
        }
    }

    @Test(arguments: [App.counter, App.todos, App.json])
    func clientsDoingRandomActionsConverge(app: App) async throws {
        try await withServer(app: app) { server in
            var clients: [TestClient] = []
            for _ in 0..<4 { clients.append(try await TestClient.connect(server, using: transport)) }
            var random = SplitMix64(seed: 7)
            for step in 0..<300 {
                clients[step % clients.count].send(Self.randomAction(for: app.name, using: &random))
            }
            // A marker from every client: once each is answered, every request before it was applied.
            for (index, client) in clients.enumerated() { client.send(.history(id: "done\(index)", limit: 0)) }
            for (index, client) in clients.enumerated() {
                _ = try await client.next(timeout: .seconds(20)) { $0 == .history(id: "done\(index)", entries: []) }
            }
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            let version = try #require(room["version"]?.intValue)
            #expect(version > 0)
            for client in clients {
                try await client.catchUp(to: version)
                #expect(await client.version == version)
                #expect(await client.state == room["state"])
                #expect(await client.gaps.isEmpty)
            }
        }
    }

    @Test(arguments: EventLoopBackend.allCases)
    func aClientThatStopsReadingNeitherSlowsOthersNorSeesAGap(eventLoop: EventLoopBackend) async throws {
        let clock = TestClock()
        try await withServer(
            app: .json, clock: ServerClock(clock),
            configure: {
                $0.queueLimitBytes = 64 * 1024; $0.rateLimit = 0; $0.eventLoop = eventLoop
            }
        ) { server in
            let slow = try await TestClient.connect(server, using: transport)
            _ = try await slow.next { $0.isSnapshot }
            slow.socket.setReceiving(false)
            let watcher = try await TestClient.connect(server, using: transport)
            let driver = try await TestClient.connect(server, using: transport)
            // Incompressible, so a client that negotiated permessage-deflate falls as far behind as a plain one.
            var random = SplitMix64(seed: 2_000)
            let payload = JSON.string(random.incompressibleText(count: 2_000))
            let total = 5_000
            for index in 1...total {
                let value: JSON = ["n": .int(index), "padding": payload]
                driver.send(
                    .action(
                        id: "d\(index)",
                        action: ["type": "patch", "ops": [["op": "add", "path": "/v", "value": value]]]))
                if index % 500 == 0 { try await driver.catchUp(to: index) }
            }
            try await driver.catchUp(to: total)
            try await watcher.catchUp(to: total)
            #expect(await watcher.gaps.isEmpty)
            #expect(await watcher.snapshots == 1)
            let trickle = try await driver.trickleUntilAQueueIsDropped(on: server, clock: clock)

            slow.socket.setReceiving(true)
            try await slow.catchUp(to: total + trickle, timeout: .seconds(30))
            #expect(await slow.gaps.isEmpty)
            #expect(await slow.snapshots >= 2, "the server should have resynchronised the slow client")
            #expect(await slow.state == (try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"]))
        }
    }

    @Test(arguments: EventLoopBackend.allCases)
    func aThousandSocketsInOneRoomAllReceiveOneAction(eventLoop: EventLoopBackend) async throws {
        try await withServer(configure: { $0.eventLoop = eventLoop }) { server in
            var clients: [TestClient] = []
            for _ in 0..<10 {
                try await withThrowingTaskGroup(of: TestClient.self) { group in
                    for _ in 0..<100 {
                        group.addTask { try await TestClient.connect(server, room: "crowd", using: transport) }
                    }
                    for try await client in group { clients.append(client) }
                }
            }
            #expect(clients.count == 1_000)
            clients[0].send(.action(id: "one", action: ["type": "increment"]))
            for client in clients {
                try await client.catchUp(to: 1, timeout: .seconds(30))
                #expect(await client.state == ["count": 1])
            }
            for client in clients { client.close() }
        }
    }
}
