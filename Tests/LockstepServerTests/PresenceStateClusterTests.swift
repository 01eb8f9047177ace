import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Presence state across servers sharing one PostgreSQL (PROTOCOL 1.3 "Presence state"): a state set through one
/// server reaches the clients of the others within 1 s.
@Suite(.timeLimit(.minutes(5)), .serialized, .postgresExclusive) struct PresenceStateClusterTests {
    /// The peers `message` shows, full list or changed entries alone; nil for any other message.
    private static func peers(in message: ServerMessage) -> [Peer]? {
        switch message {
        case .presence(let peers), .presenceChanged(let peers): peers
        default: nil
        }
    }

    /// Reads `client`'s messages until one shows the peer named `name` with `state` (nil: with none); returns how
    /// long that took.
    private static func waitFor(
        _ name: String, state: JSON?, at client: TestClient, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Duration {
        let started = ContinuousClock.now
        _ = try await client.next(timeout: .seconds(20), sourceLocation: sourceLocation) { message in
            guard let peer = peers(in: message)?.first(where: { $0.name == name }) else { return false }
            return peer.state == state
        }
        return started.duration(to: .now)
    }

    @Test func aStateReachesTheClientsOfAnotherServerWithinASecond() async throws {
        try await withCluster(nodes: 2) { _, servers in
            let alice = try await TestClient.connect(servers[0], query: "name=alice", using: sharedTransport)
            let bob = try await TestClient.connect(servers[1], query: "name=bob", using: sharedTransport)
            for client in [alice, bob] {
                _ = try await client.next { message in
                    Set(Self.peers(in: message)?.map(\.name) ?? []) == ["alice", "bob"]
                }
            }

            // One state at a time: each crosses within a second.
            for round in 1...5 {
                alice.send(.presence(id: nil, state: ["cursor": .int(round)]))
                let took = try await Self.waitFor("alice", state: ["cursor": .int(round)], at: bob)
                #expect(took < .seconds(1), "round \(round) took \(took)")
            }

            // A burst ends on its last state on the other server too, within a second of it.
            for index in 1...300 { alice.send(.presence(id: nil, state: ["cursor": .int(1_000 + index)])) }
            let last = try await Self.waitFor("alice", state: ["cursor": 1_300], at: bob)
            #expect(last < .seconds(1) + .milliseconds(500), "the burst's last state took \(last)")

            // The other way, and a client joining another server sees the states in its full list.
            bob.send(.presence(id: nil, state: "typing"))
            #expect(try await Self.waitFor("bob", state: "typing", at: alice) < .seconds(1))
            let carol = try await TestClient.connect(servers[1], query: "name=carol", using: sharedTransport)
            _ = try await carol.next { message in
                guard case .presence(let peers) = message else { return false }
                return peers.first { $0.name == "alice" }?.state == ["cursor": 1_300]
                    && peers.first { $0.name == "bob" }?.state == "typing"
            }

            // Cleared.
            alice.send(.presence(id: nil, state: .null))
            #expect(try await Self.waitFor("alice", state: nil, at: bob) < .seconds(1))

            // Nothing of it is in the room.
            let room = try await HTTPGet(port: servers[1].port, path: "/rooms/test")
            #expect(room.json?["version"] == 0)
        }
    }

    /// A state set while the database is away cannot be published then; it is once the database is back, and the
    /// other server's clients see it, though nothing changed since.
    @Test func aStateSetWhileTheDatabaseIsAwayCrossesOnceItIsBack() async throws {
        try await withCluster(nodes: 2, operationTimeout: .seconds(2)) { postgres, servers in
            let alice = try await TestClient.connect(servers[0], query: "name=alice", using: sharedTransport)
            let bob = try await TestClient.connect(servers[1], query: "name=bob", using: sharedTransport)
            _ = try await bob.next { message in Set(Self.peers(in: message)?.map(\.name) ?? []) == ["alice", "bob"] }

            try await offThePool { postgres.halt() }
            alice.send(.presence(id: nil, state: "away"))
            // The publication fails (the database is gone for longer than a call may take).
            try await Task.sleep(for: .seconds(3))
            try await offThePool { try postgres.start() }
            _ = try await Self.waitFor("alice", state: "away", at: bob)
        }
    }

    /// A room left memory while its publication of its clients waited out its interval, and came back on the same
    /// server with another client: the other servers see that client, not the empty room the earlier copy of the room
    /// published at the end of its wait.
    @Test func aRoomBackInMemoryIsNotHiddenByItsEarlierCopysLastPublication() async throws {
        let interval = Duration.seconds(2)
        try await withCluster(
            nodes: 2,
            configure: { configuration in
                configuration.presenceInterval = interval
                configuration.roomIdle = .milliseconds(100)
            }
        ) { _, servers in
            let bob = try await TestClient.connect(servers[1], query: "name=bob", using: sharedTransport)
            _ = try await bob.nextJSON(type: "snapshot")
            // Server 0 publishes alice as she joins, and its next publication waits an interval. She leaves at once,
            // her room leaves server 0 and comes back with carol, published at once.
            let joined = ContinuousClock.now
            let alice = try await TestClient.connect(servers[0], query: "name=alice", using: sharedTransport)
            _ = try await alice.nextJSON(type: "snapshot")
            alice.close()
            while try await metric("lockstep_evictions_total", port: servers[0].port) < 1 {
                try await Task.sleep(for: .milliseconds(20))
            }
            let carol = try await TestClient.connect(servers[0], query: "name=carol", using: sharedTransport)
            _ = try await carol.nextJSON(type: "snapshot")
            try #require(ContinuousClock.now < joined + interval, "carol came after the wait")

            // Past the wait, a client joining server 1 finds carol on server 0.
            try await Task.sleep(until: joined + interval + .seconds(1))
            let dave = try await TestClient.connect(servers[1], query: "name=dave", using: sharedTransport)
            let presence = try await dave.next { message in
                guard case .presence = message else { return false }
                return true
            }
            #expect(Set(Self.peers(in: presence)?.map(\.name) ?? []) == ["bob", "carol", "dave"])
            carol.close()
        }
    }
}
