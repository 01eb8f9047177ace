import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import LockstepTransport
import Testing

/// Several servers on one PostgreSQL, under contention: new rooms first used through every server at the same
/// instant, a room read through a server its clients never used, and a client that moves off a killed server while
/// others write. What the protocol promises across servers (one epoch per room, GET on every server, resume never
/// behind what the client applied) must hold when the servers race each other, not only when they take turns.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct ClusterContentionTests {
    /// What one join through one server got: the snapshot's epoch and version, or why there was none.
    struct Join: Sendable, CustomStringConvertible {
        let room: String
        let node: Int
        var epoch: String?
        var version: Int?
        var failure: String?

        var description: String { "\(room) on node \(node): " + (failure ?? "epoch \(epoch ?? "none")") }
    }

    /// 200 new rooms for every app, each joined through all three servers: 600 joins at once.
    static let newRooms: [(App, Int)] = [(.json, 200), (.counter, 200), (.todos, 200)]

    /// Opens a socket to `room` on `port` once `gate` lets every join go, and reads its first message.
    static func join(room: String, node: Int, port: Int, gate: StartingGate) async -> (Join, TestClient?) {
        var join = Join(room: room, node: node)
        await gate.wait()
        let client: TestClient
        do {
            client = try await TestClient.connect(port: port, room: room, using: sharedTransport)
        } catch {
            join.failure = "cannot connect: \(error)"
            return (join, nil)
        }
        do {
            let first = try await client.nextJSON(timeout: .seconds(60))
            if first["type"] == "snapshot" {
                join.epoch = first["epoch"]?.stringValue
                join.version = first["version"]?.intValue
                if join.epoch == nil { join.failure = "a snapshot without an epoch" }
            } else {
                join.failure = "the first message is not a snapshot: \(first)"
            }
        } catch TestClientError.closed {
            join.failure =
                "closed with \(client.socket.closeCode.map(String.init) ?? "no code") "
                + client.socket.closeReason
        } catch {
            join.failure = "\(error)"
        }
        return (join, client)
    }

    @Test(arguments: newRooms)
    func newRoomsJoinedAtTheSameInstantThroughEveryServerHaveOneEpochEach(app: App, rooms: Int) async throws {
        try await withCluster(app: app) { _, servers in
            let names = (0..<rooms).map { "new-\(app.name)-\($0)" }
            let gate = StartingGate(count: names.count * servers.count)
            let ports = servers.map(\.port)
            var joins: [Join] = []
            let started = ContinuousClock.now
            var clients: [TestClient] = []
            defer { for client in clients { client.close() } }
            await withTaskGroup(of: (Join, TestClient?).self) { group in
                for name in names {
                    for (node, port) in ports.enumerated() {
                        group.addTask { await Self.join(room: name, node: node, port: port, gate: gate) }
                    }
                }
                for await (join, client) in group {
                    joins.append(join)
                    if let client { clients.append(client) }
                }
            }

            print("\(app.name): \(joins.count) joins in \(started.duration(to: .now))")
            let refused = joins.filter { $0.failure != nil }
            #expect(
                refused.isEmpty,
                "\(refused.count) of \(joins.count) joins got no snapshot, e.g. \(refused.prefix(3).map(\.description))"
            )
            #expect(joins.allSatisfy { $0.version == nil || $0.version == 0 }, "nothing changed the new rooms")
            var snapshotEpochs: [String: Set<String>] = [:]
            for join in joins { if let epoch = join.epoch { snapshotEpochs[join.room, default: []].insert(epoch) } }
            let split = names.filter { (snapshotEpochs[$0]?.count ?? 0) > 1 }
            #expect(
                split.isEmpty,
                """
                \(split.count) of \(rooms) rooms got a different epoch in the snapshots of different servers (one \
                epoch per room across servers), e.g. \(split.prefix(3).map { "\($0): \(snapshotEpochs[$0]!.sorted())" })
                """)

            // Every server answers for every room, with the epoch the snapshots carried.
            var unanswered: [String] = []
            var disagreeing: [String] = []
            for name in names {
                var epochs = snapshotEpochs[name] ?? []
                for (node, port) in ports.enumerated() {
                    let answer = try await HTTPGet(port: port, path: "/rooms/\(name)")
                    guard answer.status == 200, let room = answer.json else {
                        unanswered.append("\(name) on node \(node): \(answer.status) \(answer.text)")
                        continue
                    }
                    epochs.insert(room["epoch"]?.stringValue ?? "none")
                }
                if epochs.count > 1 { disagreeing.append("\(name): \(epochs.sorted())") }
            }
            print("\(app.name): joins and GETs in \(started.duration(to: .now))")
            #expect(
                unanswered.isEmpty,
                "\(unanswered.count) GETs of \(rooms * ports.count) did not answer 200, e.g. \(unanswered.prefix(3))")
            #expect(
                disagreeing.isEmpty,
                """
                \(disagreeing.count) of \(rooms) rooms have more than one epoch across snapshots and GET on every \
                server, e.g. \(disagreeing.prefix(3))
                """)
        }
    }

    @Test func aServerAnswersForARoomThatAClientOfAnotherServerOnlyJoined() async throws {
        try await withCluster(nodes: 2, app: .todos) { _, servers in
            let client = try await TestClient.connect(servers[0], room: "joined-on-a", using: sharedTransport)
            defer { client.close() }
            let snapshot = try await client.nextJSON(type: "snapshot")
            // The room was used: GET answers on every server, the one its client never used included.
            let answer = try await HTTPGet(port: servers[1].port, path: "/rooms/joined-on-a")
            #expect(answer.status == 200, "GET on B: \(answer.status) \(answer.text)")
            let room = try #require(answer.json, "GET on B: \(answer.text)")
            #expect(room["version"] == 0)
            #expect(room["state"] == snapshot["state"])
            #expect(room["epoch"] != nil && room["epoch"] == snapshot["epoch"], "one epoch per room across servers")
            #expect(try await HTTPGet(port: servers[1].port, path: "/rooms/joined-nowhere").status == 404)
        }
    }

    @Test func aClientOfAKilledServerResumesOnASurvivorNeverBehindTheVersionItApplied() async throws {
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        // The survivor must be behind the database at the very moment the client arrives: a race that a run wins in
        // some rounds only, so a few rounds, bounded in time, stopping at the first finding.
        let started = ContinuousClock.now
        var round = 0
        var findings: [String] = []
        while findings.isEmpty, round < 12, round < 3 || started.duration(to: .now) < .seconds(60) {
            round += 1
            findings += try await Self.killAndMove(postgres: postgres, round: round)
        }
        #expect(findings.isEmpty, "in round \(round): \(findings.joined(separator: "; "))")
        print("resume after kill -9: \(round) rounds in \(started.duration(to: .now))")
    }

    /// The action that adds key `key` to a `json` room, with `key` as its id.
    static func add(_ key: String, value: Int) -> String {
        let ops = #"[{"op":"add","path":"/\#(key)","value":\#(value)}]"#
        return #"{"type":"action","id":"\#(key)","action":{"type":"patch","ops":\#(ops)}}"#
    }

    /// Sends batches of 20 actions and waits for every answer, until `stop` is set or its server dies.
    static func write(_ client: TestClient, name: String, until stop: Flag) async throws {
        var sent = 0
        while !stop.isSet, !Task.isCancelled {
            for _ in 0..<20 {
                sent += 1
                client.sendRaw(add("\(name)-\(sent)", value: sent))
            }
            var answered = 0
            while answered < 20 {
                let type: String?
                do {
                    type = try await client.nextJSON(timeout: .seconds(30))["type"]?.stringValue
                } catch TestClientError.closed {
                    return
                }
                if type == "ack" { answered += 1 }
                if type == "error" { Issue.record("writer \(name) got an error") }
            }
        }
    }

    /// One round: three servers, writers through each; a reader on A notes the version it applied when A is killed,
    /// then moves to B and to C with `since=` that version and the room's epoch. Returns what went wrong.
    static func killAndMove(postgres: PostgresServer, round: Int) async throws -> [String] {
        let arguments = [
            "--app", "json", "--postgres", postgres.url, "--postgres-timeout", "20s", "--rate-limit", "0",
            "--log-level", "critical",
        ]
        var nodes: [NodeProcess] = []
        defer { for node in nodes { node.stop() } }
        for _ in 0..<3 { nodes.append(try await NodeProcess.start(arguments: arguments)) }
        let ports = nodes.map(\.port)
        let room = "moved-\(round)"

        // The room's history begins with a write through A, so every server reads one epoch from the database
        // (what happens to rooms first used on several servers at once is the first test's).
        let creator = try await TestClient.connect(port: nodes[0].port, room: room, using: sharedTransport)
        let epoch = try #require(try await creator.nextJSON(type: "snapshot")["epoch"]?.stringValue)
        creator.sendRaw(add("seed", value: 0))
        #expect(try await creator.nextJSON(type: "ack")["version"] == 1)
        creator.close()

        let reader = try await TestClient.connect(port: nodes[0].port, room: room, using: sharedTransport)
        #expect(try await reader.nextJSON(type: "snapshot")["epoch"]?.stringValue == epoch)
        var writers: [TestClient] = []
        for node in nodes {
            for _ in 0..<2 {
                let writer = try await TestClient.connect(port: node.port, room: room, using: sharedTransport)
                #expect(try await writer.nextJSON(type: "snapshot")["epoch"]?.stringValue == epoch)
                writers.append(writer)
            }
        }
        defer { for client in writers + [reader] { client.close() } }

        let stop = Flag()
        var findings: [String] = []
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, writer) in writers.enumerated() {
                group.addTask { try await Self.write(writer, name: "w\(round)x\(index)", until: stop) }
            }
            defer { stop.set() }

            // Mid-traffic: A dies once its reader has applied some hundreds of versions.
            try await reader.catchUp(to: 100 + 40 * round, timeout: .seconds(30))
            nodes[0].kill9()
            _ = await reader.drain(timeout: .seconds(5))
            let applied = await reader.version
            #expect(await reader.gaps.isEmpty)

            // Every patch a server sends was committed: the survivors must resume at `applied`, or send a snapshot
            // no older.
            let query = "since=\(applied)&epoch=\(epoch)"
            async let onB = TestClient.connect(port: ports[1], room: room, query: query, using: sharedTransport)
            async let onC = TestClient.connect(port: ports[2], room: room, query: query, using: sharedTransport)
            let moved = [("B", try await onB), ("C", try await onC)]
            defer { for (_, client) in moved { client.close() } }
            var bases: [Int] = []
            for (server, client) in moved {
                let first = try await client.nextJSON(timeout: .seconds(20))
                let version = first["version"]?.intValue ?? -1
                switch first["type"]?.stringValue {
                case "resume"? where version == applied, "snapshot"? where version >= applied:
                    break
                case "snapshot"?:
                    findings.append(
                        """
                        server \(server) answered since=\(applied)&epoch=\(epoch) with a snapshot at version \
                        \(version): the client's state went back \(applied - version) versions
                        """)
                default:
                    findings.append("server \(server) answered since=\(applied) with \(first)")
                }
                bases.append(version)
            }

            stop.set()
            try await group.waitForAll()
            // Every writer's batch was answered, so everything is committed; both survivors reach the last version.
            var final = 0
            for node in nodes[1...] {
                final = max(final, try await HTTPGet(port: node.port, path: "/rooms/\(room)").json?["version"]?.intValue ?? 0)
            }
            for node in nodes[1...] {
                #expect(try await ClusterTests.room(room, port: node.port, at: final) != nil)
            }
            for ((server, client), base) in zip(moved, bases) {
                for problem in try await Self.follow(client, from: base, to: final) {
                    findings.append("after moving to \(server): \(problem)")
                }
            }
        }
        return findings
    }

    /// Reads `client`'s messages until it reaches `final`, from version `base`; every gap or step back it saw.
    static func follow(_ client: TestClient, from base: Int, to final: Int) async throws -> [String] {
        var version = base
        var problems: [String] = []
        while version < final {
            let json = try await client.nextJSON(timeout: .seconds(20))
            guard let next = json["version"]?.intValue else { continue }
            switch json["type"]?.stringValue {
            case "patch"? where next != version + 1:
                problems.append("patch \(next) after version \(version)")
            case "snapshot"? where next < version:
                problems.append("a snapshot at \(next) after version \(version)")
            case "patch"?, "snapshot"?:
                break
            default:
                continue
            }
            version = next
        }
        return problems
    }
}
