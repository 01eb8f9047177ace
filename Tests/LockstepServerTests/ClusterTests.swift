import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepPostgres
import LockstepServer
import LockstepStorage
import LockstepTestSupport
import Logging
import Testing

/// Servers on one throwaway PostgreSQL, each with its own storage, stopped afterwards (the database last).
func withCluster<T>(
    nodes: Int = 3, app: App = .counter, operationTimeout: Duration = .seconds(20),
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (PostgresServer, [SyncServer]) async throws -> T
) async throws -> T {
    let postgres = try PostgresServer()
    defer { postgres.stop() }
    var servers: [SyncServer] = []
    defer { for server in servers { server.shutdown() } }
    for _ in 0..<nodes {
        servers.append(
            try await clusterNode(on: postgres, app: app, operationTimeout: operationTimeout, configure: configure))
    }
    return try await body(postgres, servers)
}

/// One more server on `postgres`'s database; database calls time out generously unless a test is about that, since
/// the rest of the suite runs beside it on two cores.
func clusterNode(
    on postgres: PostgresServer, app: App, operationTimeout: Duration, clock: ServerClock = .continuous,
    configure: (inout ServerConfiguration) -> Void = { _ in }
) async throws -> SyncServer {
    var storageConfiguration = PostgresRoomStorage.Configuration()
    storageConfiguration.operationTimeout = operationTimeout
    var logger = Logger(label: "lockstep-cluster-test")
    logger.logLevel = .critical
    let storage = try await openStorage(
        url: postgres.url, app: app.name, configuration: storageConfiguration, logger: logger)
    var configuration = ServerConfiguration(app: app)
    configuration.port = 0
    configure(&configuration)
    return try SyncServer(configuration: configuration, storage: .shared(storage), clock: clock, logger: logger)
}

/// A database just started, on a machine running the rest of the suite, may take longer to open than a test's short
/// timeout for its writes: opening is tried three times, and the timeout still applies to everything after.
private func openStorage(
    url: String, app: String, configuration: PostgresRoomStorage.Configuration, logger: Logger
) async throws(StorageError) -> PostgresRoomStorage {
    var attempt = 1
    while true {
        do {
            return try await PostgresRoomStorage(url: url, app: app, configuration: configuration, logger: logger)
        } catch {
            guard case .unavailable = error, attempt < 3 else { throw error }
            attempt += 1
        }
    }
}

@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct ClusterTests {
    /// A random request for `app`: mostly actions, some undos, redos and reverts to a version the client has seen.
    static func randomRequest(_ app: App, id: String, seen: Int, random: inout SplitMix64) -> String {
        switch random.next() % 10 {
        case 0: return #"{"type":"undo","id":"\#(id)"}"#
        case 1: return #"{"type":"redo","id":"\#(id)"}"#
        case 2: return #"{"type":"revert","id":"\#(id)","to":\#(random.next() % UInt64(seen + 1))}"#
        default: break
        }
        let n = random.next() % 5
        let action: String
        switch app.name {
        case "counter": action = n == 0 ? #"{"type":"decrement"}"# : #"{"type":"add","amount":\#(n)}"#
        case "todos":
            action = n < 3 ? #"{"type":"add","title":"t\#(id)"}"# : #"{"type":"toggle","id":\#(random.next() % 8)}"#
        default:
            action = #"{"type":"patch","ops":[{"op":"add","path":"/k\#(n)","value":"\#(id)"}]}"#
        }
        return #"{"type":"action","id":"\#(id)","action":\#(action)}"#
    }

    /// Every client of every server sends `count` random requests at once and waits for each answer.
    static func traffic(_ clients: [TestClient], app: App, count: Int, seed: UInt64) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    var random = SplitMix64(seed: seed + UInt64(index))
                    for n in 0..<count {
                        let id = "r\(index)-\(n)"
                        client.sendRaw(randomRequest(app, id: id, seen: max(0, await client.version), random: &random))
                        _ = try await client.next(timeout: .seconds(30)) { message in
                            switch message {
                            case .ack(let answered, _), .error(let answered, _, _): answered == id
                            default: false
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Whether `GET /healthz` on `port` answers 200 within 30 s: the server reaches its database again.
    static func becomesHealthy(port: Int) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while try await HTTPGet(port: port, path: "/healthz").status != 200 {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    /// The room as `GET /rooms/ROOM` on `port` shows it once it reaches `version` (nil if not within 30 s).
    static func room(_ name: String, port: Int, at version: Int) async throws -> JSON? {
        for _ in 0..<300 {
            if let room = try await HTTPGet(port: port, path: "/rooms/\(name)").json, room["version"]?.intValue == version {
                return room
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// The patch each version of the room had, byte for byte, as `client` received them.
    static func patches(of client: TestClient) async throws -> [Int: [UInt8]] {
        var patches: [Int: [UInt8]] = [:]
        for frame in await client.frames {
            guard let json = try? JSON(parsing: frame), json["type"] == "patch", let version = json["version"]?.intValue
            else { continue }
            patches[version] = frame
        }
        return patches
    }

    @Test(arguments: [App.counter, App.todos, App.json])
    func clientsOnThreeServersSeeOneOrder(app: App) async throws {
        try await withCluster(app: app) { _, servers in
            var clients: [TestClient] = []
            for server in servers {
                for _ in 0..<2 {
                    clients.append(try await TestClient.connect(server, room: "r", using: sharedTransport))
                }
            }
            for client in clients { _ = try await client.next { if case .snapshot = $0 { true } else { false } } }
            try await Self.traffic(clients, app: app, count: 40, seed: 15)

            // Every ack was sent after its commit: the newest version any server shows is the room's last.
            var final = 0
            for server in servers {
                final = max(final, try await HTTPGet(port: server.port, path: "/rooms/r").json?["version"]?.intValue ?? 0)
            }
            #expect(final > 100)
            var reference: [Int: [UInt8]]?
            for client in clients {
                try await client.catchUp(to: final)
                #expect(await client.gaps.isEmpty)
                let patches = try await Self.patches(of: client)
                #expect(patches.count == final, "every version from 1, once")
                if let reference {
                    let differing = (1...final).filter { patches[$0] != reference[$0] }
                    #expect(
                        differing.isEmpty, "the same bytes for every version; these differ: \(differing.prefix(10))")
                }
                reference = patches
            }
            for server in servers {
                let room = try #require(try await Self.room("r", port: server.port, at: final))
                #expect(room["state"] == (await clients[0].state))
            }
        }
    }

    @Test func undoOnOneServerRevertsAChangeMadeThroughAnother() async throws {
        try await withCluster(nodes: 2) { _, servers in
            let alice = try await TestClient.connect(servers[0], room: "u", using: sharedTransport)
            let bob = try await TestClient.connect(servers[1], room: "u", using: sharedTransport)
            _ = try await alice.nextJSON(type: "snapshot")
            _ = try await bob.nextJSON(type: "snapshot")
            alice.sendRaw(#"{"type":"action","id":"a","action":{"type":"add","amount":5}}"#)
            #expect(try await alice.nextJSON(type: "ack")["version"] == 1)
            bob.sendRaw(#"{"type":"undo","id":"u"}"#)
            let ack = try await bob.nextJSON(type: "ack")
            #expect(ack["version"] == 2)
            try await alice.catchUp(to: 2)
            #expect(await alice.state == ["count": 0])
            bob.sendRaw(#"{"type":"redo","id":"r"}"#)
            #expect(try await bob.nextJSON(type: "ack")["version"] == 3)
            try await alice.catchUp(to: 3)
            #expect(await alice.state == ["count": 5])
            // A request sent after an ack, to any server, is applied after that change.
            alice.sendRaw(#"{"type":"revert","id":"t","to":0}"#)
            #expect(try await alice.nextJSON(type: "ack")["version"] == 4)
            bob.sendRaw(#"{"type":"action","id":"b","action":{"type":"increment"}}"#)
            #expect(try await bob.nextJSON(type: "ack")["version"] == 5)
            let room = try #require(try await Self.room("u", port: servers[0].port, at: 5))
            #expect(room["state"] == ["count": 1])
        }
    }

    @Test func aClientResumesOnAnotherServerAndItsSessionIsKnownThere() async throws {
        try await withCluster(nodes: 2) { _, servers in
            let first = try await TestClient.connect(
                servers[0], room: "s", query: "session=phone", using: sharedTransport)
            let epoch = try #require(try await first.nextJSON(type: "snapshot")["epoch"]?.stringValue)
            for seq in 1...3 {
                first.sendRaw(#"{"type":"action","id":"a\#(seq)","seq":\#(seq),"action":{"type":"increment"}}"#)
                #expect(try await first.nextJSON(type: "ack")["version"]?.intValue == seq)
            }
            first.close()
            let moved = try await TestClient.connect(
                servers[1], room: "s", query: "session=phone&since=1&epoch=\(epoch)", using: sharedTransport)
            let resume = try await moved.nextJSON()
            #expect(resume["type"] == "resume")
            #expect(resume["seq"] == 3)
            #expect(resume["epoch"]?.stringValue == epoch)
            try await moved.catchUp(to: 3)
            #expect(
                try await Self.patches(of: moved).keys.sorted() == [2, 3], "the patches after since=1, from the log")
            moved.sendRaw(#"{"type":"action","id":"a3","seq":3,"action":{"type":"increment"}}"#)
            #expect(try await moved.nextJSON(type: "ack")["duplicate"] == true)
            moved.sendRaw(#"{"type":"action","id":"a4","seq":4,"action":{"type":"increment"}}"#)
            #expect(try await moved.nextJSON(type: "ack")["version"] == 4)
        }
    }

    @Test func youIsDistinctAndPresenceListsEveryServersClients() async throws {
        try await withCluster(nodes: 2) { _, servers in
            let alice = try await TestClient.connect(servers[0], room: "p", query: "name=alice", using: sharedTransport)
            let bob = try await TestClient.connect(servers[1], room: "p", query: "name=bob", using: sharedTransport)
            let you = [
                try await alice.nextJSON(type: "snapshot")["you"], try await bob.nextJSON(type: "snapshot")["you"],
            ]
            #expect(you[0] != you[1])
            var names: Set<String> = []
            while names != ["alice", "bob"] {
                let presence = try await alice.nextJSON(type: "presence")
                names = Set(presence["peers"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
            }
            bob.close()
            while names != ["alice"] {
                let presence = try await alice.nextJSON(type: "presence")
                names = Set(presence["peers"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
            }
        }
    }

    @Test func everyServerAnswersForARoomItsClientsNeverUsed() async throws {
        try await withCluster(nodes: 2) { _, servers in
            let client = try await TestClient.connect(servers[0], room: "h", using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            for n in 1...5 {
                client.sendRaw(#"{"type":"action","id":"\#(n)","action":{"type":"add","amount":\#(n)}}"#)
                _ = try await client.nextJSON(type: "ack")
            }
            let room = try #require(try await HTTPGet(port: servers[1].port, path: "/rooms/h").json)
            #expect(room["version"] == 5)
            #expect(room["state"] == ["count": 15])
            #expect(try await HTTPGet(port: servers[1].port, path: "/rooms/h?version=2").json?["state"] == ["count": 3])
            let log = try await HTTPGet(port: servers[1].port, path: "/rooms/h/log?after=3").text
            #expect(log.split(separator: "\n").count == 3)
            #expect(try await HTTPGet(port: servers[1].port, path: "/rooms/never").status == 404)
        }
    }

    @Test func aServerThatCannotReachItsDatabaseAppliesNothingAndSaysSo() async throws {
        try await withCluster(nodes: 1, operationTimeout: .seconds(3)) { postgres, servers in
            let server = servers[0]
            let client = try await TestClient.connect(server, room: "d", query: "session=s", using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            client.sendRaw(#"{"type":"action","id":"a1","seq":1,"action":{"type":"increment"}}"#)
            #expect(try await client.nextJSON(type: "ack")["version"] == 1)
            #expect(try await HTTPGet(port: server.port, path: "/healthz").status == 200)

            postgres.halt()
            var answer: JSON = .null
            for attempt in 2...40 where answer["code"] != "unavailable" {
                client.sendRaw(
                    #"{"type":"action","id":"a\#(attempt)","seq":\#(attempt),"action":{"type":"increment"}}"#)
                answer = try await client.nextJSON(timeout: .seconds(15))
                #expect(answer["type"] != "ack", "nothing is acknowledged without the database")
            }
            #expect(answer["code"] == "unavailable")
            #expect(try await HTTPGet(port: server.port, path: "/healthz").status == 503)

            try postgres.start()
            #expect(try await ClusterTests.becomesHealthy(port: server.port))
            let again = try await TestClient.connect(server, room: "d", query: "session=s", using: sharedTransport)
            _ = try await again.nextJSON(type: "snapshot")
            again.sendRaw(#"{"type":"action","id":"b","seq":100,"action":{"type":"increment"}}"#)
            #expect(try await again.nextJSON(type: "ack")["version"] == 2)
        }
    }
}

/// Real `lockstep serve --postgres` processes, for what only a process shows: `kill -9`.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct ClusterProcessTests {
    static func increment(_ seq: Int) -> String {
        #"{"type":"action","id":"\#(seq)","seq":\#(seq),"action":{"type":"increment"}}"#
    }

    @Test func aKilledServerLosesNothingAcknowledgedAndItsClientMovesOn() async throws {
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let arguments = [
            "--app", "counter", "--postgres", postgres.url, "--postgres-timeout", "20s", "--log-level", "error",
        ]
        let doomed = try await ServerProcess.start(arguments: arguments)
        let survivor = try await ServerProcess.start(arguments: arguments)
        defer { survivor.terminate() }

        let watcher = try await TestClient.connect(port: survivor.port, room: "k", using: sharedTransport)
        _ = try await watcher.nextJSON(type: "snapshot")
        let client = try await TestClient.connect(
            port: doomed.port, room: "k", query: "session=s", using: sharedTransport)
        _ = try await client.nextJSON(type: "snapshot")
        let total = 400
        for seq in 1...total { client.sendRaw(Self.increment(seq)) }
        var acked = 0
        while acked < 50 {
            if case .ack = try await client.next() { acked += 1 }
        }
        doomed.kill9()
        for case .ack in await client.drain(timeout: .seconds(2)) { acked += 1 }

        // Everything acknowledged is in the database; the survivor has it, and the session's mark says how far.
        let moved = try await TestClient.connect(
            port: survivor.port, room: "k", query: "session=s", using: sharedTransport)
        let snapshot = try await moved.nextJSON(type: "snapshot")
        let count = try #require(snapshot["state"]?["count"]?.intValue)
        let mark = try #require(snapshot["seq"]?.intValue)
        #expect(count >= acked)
        #expect(mark == count, "one increment per applied request")
        // Sending everything again applies each request once.
        for seq in 1...total { moved.sendRaw(Self.increment(seq)) }
        var answered = 0
        var duplicates = 0
        while answered < total {
            let json = try await moved.nextJSON(type: "ack")
            answered += 1
            if json["duplicate"] == true { duplicates += 1 }
        }
        #expect(duplicates == mark)
        let room = try #require(try await HTTPGet(port: survivor.port, path: "/rooms/k").json)
        #expect(room["state"] == ["count": .int(total)])
        try await watcher.catchUp(to: room["version"]?.intValue ?? -1)
        #expect(await watcher.gaps.isEmpty)
        #expect(await watcher.state == ["count": .int(total)])
    }

    @Test func aDeadServersClientsLeavePresenceWithinThePeerLifetime() async throws {
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let arguments = [
            "--app", "counter", "--postgres", postgres.url, "--postgres-timeout", "20s", "--peer-lifetime", "3s",
        ]
        let doomed = try await ServerProcess.start(arguments: arguments)
        let survivor = try await ServerProcess.start(arguments: arguments)
        defer { survivor.terminate() }
        let alice = try await TestClient.connect(
            port: survivor.port, room: "p", query: "name=alice", using: sharedTransport)
        let bob = try await TestClient.connect(port: doomed.port, room: "p", query: "name=bob", using: sharedTransport)
        _ = try await bob.nextJSON(type: "snapshot")
        func names(in presence: JSON) -> Set<String> {
            Set(presence["peers"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        }
        while try names(in: await alice.nextJSON(type: "presence")) != ["alice", "bob"] {}
        doomed.kill9()
        let killed = ContinuousClock.now
        while try names(in: await alice.nextJSON(type: "presence", timeout: .seconds(10))) != ["alice"] {}
        let gone = killed.duration(to: .now)
        // The peer lifetime, then at most a third of it until the next reading (and slack for a loaded machine).
        #expect(gone <= .seconds(8))
        print("a killed server's client left presence after \(gone)")
    }

    @Test func aServerRefusesADatabaseOfAnotherApp() async throws {
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let options = ["--postgres", postgres.url, "--postgres-timeout", "20s"]
        let counter = try await ServerProcess.start(arguments: ["--app", "counter"] + options)
        counter.terminate()
        await #expect(throws: ServerProcessError.self) {
            try await ServerProcess.start(arguments: ["--app", "todos"] + options)
        }
    }

    /// A write that waits for the room's lock past the database timeout is answered `unavailable`; when the lock comes
    /// free later, that abandoned write must apply nothing: its request was not acknowledged, and the room goes on
    /// from what is stored.
    @Test func aWriteGivenUpWhileWaitingForTheRoomsLockAppliesNothingWhenTheLockComesFree() async throws {
        try await withCluster(nodes: 1, operationTimeout: .seconds(1)) { postgres, servers in
            let client = try await TestClient.connect(servers[0], room: "held", using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            // Another session holds the room's row until the test ends it, so the write waits however slow the
            // machine is.
            let holder = Task {
                try? await offThePool {
                    try postgres.sql(
                        "BEGIN; SELECT version FROM rooms WHERE room = 'held' FOR UPDATE; SELECT pg_sleep(60); COMMIT;")
                }
            }
            let holding = "FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND state = 'active' "
                + "AND pid <> pg_backend_pid()"
            var held = false
            for _ in 0..<500 where !held {
                held = try await offThePool({ try postgres.sql("SELECT count(*) " + holding) }).contains("1")
                if !held { try await Task.sleep(for: .milliseconds(20)) }
            }
            try #require(held, "the other session holds the row")
            client.sendRaw(#"{"type":"action","id":"late","action":{"type":"increment"}}"#)
            let refused = try await client.nextJSON(type: "error")
            #expect(refused["id"] == "late" && refused["code"] == "unavailable")
            // Ending the holder's session rolls its transaction back and frees the row.
            _ = try await offThePool { try postgres.sql("SELECT pg_terminate_backend(pid) " + holding) }
            _ = await holder.value
            // The refused write made the server probe the database; it takes writes again once it has found it.
            #expect(try await ClusterTests.becomesHealthy(port: servers[0].port))
            client.sendRaw(#"{"type":"action","id":"next","action":{"type":"add","amount":10}}"#)
            let ack = try await client.nextJSON(type: "ack")
            #expect(ack["id"] == "next" && ack["version"] == 1, "the abandoned write took no version")
            let room = try #require(try await ClusterTests.room("held", port: servers[0].port, at: 1))
            #expect(room["state"] == ["count": 10])
        }
    }

    @Test func serversRecoverFromDroppedConnectionsAndARestartedDatabase() async throws {
        // A short timeout: a call caught by the restart fails (and is answered unavailable) instead of waiting it out.
        try await withCluster(nodes: 2, operationTimeout: .seconds(3)) { postgres, servers in
            // Each client sends its numbered increments until acknowledged, whatever the database goes through; sent
            // away when a write's outcome is unknown, it resumes with its session and sends the request again.
            let perClient = 150
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, server) in servers.enumerated() {
                    group.addTask {
                        var client: TestClient?
                        var seq = 1
                        while seq <= perClient {
                            do {
                                if client == nil {
                                    let joined = try await TestClient.connect(
                                        server, room: "t", query: "session=s\(index)", using: sharedTransport)
                                    _ = try await joined.nextJSON(type: "snapshot")
                                    client = joined
                                }
                                client?.sendRaw(ClusterProcessTests.increment(seq))
                                let answer = try await client?.next(timeout: .seconds(20)) { message in
                                    switch message {
                                    case .ack(let id, _), .error(let id, _, _): id == "\(seq)"
                                    default: false
                                    }
                                }
                                // Refused while the database is away: a pause before the request is sent again.
                                if case .ack? = answer { seq += 1 } else { try await Task.sleep(for: .milliseconds(50)) }
                            } catch {
                                client = nil
                                try await Task.sleep(for: .milliseconds(100))
                            }
                        }
                    }
                }
                group.addTask {
                    // The faults come at set times while the clients write; how far they got by then does not matter.
                    try await Task.sleep(for: .milliseconds(300))
                    try postgres.terminateBackends()
                    try await Task.sleep(for: .milliseconds(300))
                    try postgres.restart()
                }
                try await group.waitForAll()
            }
            let expected = 2 * perClient
            for server in servers {
                let room = try #require(try await ClusterTests.room("t", port: server.port, at: expected))
                #expect(room["state"] == ["count": .int(expected)])
            }
        }
    }
}
