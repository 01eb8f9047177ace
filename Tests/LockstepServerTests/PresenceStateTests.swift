import Foundation
import LockstepApps
@testable import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import LockstepTransport
import Testing

/// Presence state (PROTOCOL 1.3 "Presence state"): what each client says it is doing, beside the room, never in it.
@Suite(.timeLimit(.minutes(3))) struct PresenceStateTests {
    static let secret = Array("0123456789abcdef0123456789abcdef-lockstep".utf8)

    /// A client of `server`'s room `test` that has read its snapshot; returns it with its id (`you`) and the
    /// snapshot's `epoch`.
    private func join(
        _ server: SyncServer, query: String
    ) async throws -> (client: TestClient, you: String, epoch: String) {
        let client = try await TestClient.connect(server, query: query, using: sharedTransport)
        let snapshot = try await client.nextJSON()
        let you = try #require(snapshot["you"]?.stringValue)
        return (client, you, snapshot["epoch"]?.stringValue ?? "")
    }

    /// Reads until a full presence lists exactly `names`, in order.
    private func waitForPeers(_ names: [String], at client: TestClient) async throws {
        _ = try await client.next { message in
            if case .presence(let peers) = message { peers.map(\.name) == names } else { false }
        }
    }

    @Test func theOptionsHaveTheProtocolsDefaults() {
        let configuration = ServerConfiguration(app: .counter)
        #expect(configuration.presenceLimit == 1_024)
        #expect(configuration.presencePeers == 100)
        #expect(configuration.presenceInterval == .milliseconds(50))
    }

    @Test func aBurstOfStatesArrivesAsAboutOneMessagePerIntervalEndingOnTheLast() async throws {
        try await withServer { server in
            let (alice, aliceID, _) = try await join(server, query: "name=alice")
            let (bob, _, _) = try await join(server, query: "name=bob")
            try await waitForPeers(["alice", "bob"], at: alice)
            try await waitForPeers(["alice", "bob"], at: bob)

            let burst = 1_000
            let last: JSON = ["cursor": [.int(burst), .int(burst)]]
            let started = ContinuousClock.now
            for index in 1...burst {
                alice.send(.presence(id: nil, state: ["cursor": [.int(index), .int(index)]]))
            }
            var messages = 0
            var seen = 0
            while true {
                let message = try await bob.next(timeout: .seconds(20))
                guard case .presenceChanged(let changed) = message else {
                    Issue.record("expected only changed states, got \(message)")
                    continue
                }
                messages += 1
                #expect(changed.map(\.client) == [aliceID])
                #expect(changed.first?.name == "alice")
                // Each message carries the latest state: later ones never go back.
                let cursor = try #require(changed.first?.state?["cursor"]?[0]?.intValue)
                #expect(cursor > seen)
                seen = cursor
                if changed.first?.state == last { break }
            }
            let elapsed = started.duration(to: .now)
            let bound = Int(elapsed / server.configuration.presenceInterval) + 3
            #expect(messages <= bound, "\(messages) messages in \(elapsed)")
            #expect(messages < burst / 10)
            // The sender is told too, and ends on the same state.
            _ = try await alice.next { message in
                if case .presenceChanged(let changed) = message { changed.first?.state == last } else { false }
            }
        }
    }

    @Test func fullListsCarryStatesAndChangedEntriesAreWhole() async throws {
        try await withServer { server in
            let (alice, aliceID, _) = try await join(server, query: "name=alice")
            try await waitForPeers(["alice"], at: alice)
            alice.send(.presence(id: nil, state: ["typing": true]))
            let changed = try await alice.nextJSON(type: "presence")
            #expect(
                changed == [
                    "type": "presence",
                    "changed": [["client": .string(aliceID), "name": "alice", "state": ["typing": true]]],
                ])

            // A client that joins sees the state in the full list; one without a state has no `state`.
            let (bob, bobID, _) = try await join(server, query: "name=bob")
            let full = try await bob.nextJSON(type: "presence")
            #expect(
                full["peers"] == [
                    ["client": .string(aliceID), "name": "alice", "state": ["typing": true]],
                    ["client": .string(bobID), "name": "bob"],
                ])

            // null clears it: `changed` says so, and full lists leave it out.
            try await waitForPeers(["alice", "bob"], at: alice)
            alice.send(.presence(id: nil, state: .null))
            #expect(
                try await bob.nextJSON(type: "presence") == [
                    "type": "presence", "changed": [["client": .string(aliceID), "name": "alice", "state": .null]],
                ])

            // Not kept after the client leaves: back, it has none.
            bob.send(.presence(id: nil, state: "here"))
            _ = try await bob.nextJSON(type: "presence")
            alice.send(.presence(id: nil, state: ["typing": false]))
            _ = try await bob.next { message in
                if case .presenceChanged(let peers) = message { peers.first?.client == aliceID } else { false }
            }
            alice.close()
            let afterLeave = try await bob.nextJSON(type: "presence")
            #expect(afterLeave["peers"] == [["client": .string(bobID), "name": "bob", "state": "here"]])
            let (back, backID, _) = try await join(server, query: "name=alice")
            let rejoined = try await back.nextJSON(type: "presence")
            #expect(
                rejoined["peers"] == [
                    ["client": .string(bobID), "name": "bob", "state": "here"],
                    ["client": .string(backID), "name": "alice"],
                ])
        }
    }

    @Test func aResumedConnectionStartsWithoutAState() async throws {
        try await withServer { server in
            let (watcher, _, _) = try await join(server, query: "name=watcher")
            let (alice, _, epoch) = try await join(server, query: "name=alice&session=alice")
            try await waitForPeers(["watcher", "alice"], at: watcher)
            alice.send(.presence(id: nil, state: ["cursor": [1, 2]]))
            _ = try await watcher.next { if case .presenceChanged = $0 { true } else { false } }
            alice.close()
            try await waitForPeers(["watcher"], at: watcher)

            let resumed = try await TestClient.connect(
                server, query: "name=alice&session=alice&since=0&epoch=\(epoch)", using: sharedTransport)
            guard case .resume = try await resumed.next() else {
                Issue.record("expected a resume")
                return
            }
            let full = try await resumed.nextJSON(type: "presence")
            let entries = full["peers"]?.arrayValue ?? []
            #expect(entries.count == 2)
            #expect(entries.allSatisfy { $0["state"] == nil })
        }
    }

    @Test func statesAreNeverPartOfTheRoom() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory) { server in
            let (alice, _, _) = try await join(server, query: "name=alice")
            let (bob, _, _) = try await join(server, query: "name=bob")
            try await waitForPeers(["alice", "bob"], at: bob)
            for index in 1...20 { alice.send(.presence(id: nil, state: ["secretCursor": .int(index)])) }
            _ = try await bob.next { message in
                guard case .presenceChanged(let changed) = message else {
                    if case .patch = message { Issue.record("a state made a patch") }
                    return false
                }
                return changed.first?.state == ["secretCursor": 20]
            }
            alice.send(.action(id: "a1", action: ["type": "increment"]))
            #expect(try await alice.next { $0.isAck } == .ack(id: "a1", version: 1))
            let patch = try await bob.next { if case .patch = $0 { true } else { false } }
            #expect(patch.isPatch(version: 1))

            alice.send(.history(id: "h", limit: 100))
            guard case .history(_, let entries) = try await alice.next(where: { $0.isHistory }) else { return }
            #expect(entries.map(\.version) == [1])
            let room = try await HTTPGet(port: server.port, path: "/rooms/test")
            #expect(room.json?["version"] == 1)
            let log = try await HTTPGet(port: server.port, path: "/rooms/test/log")
            #expect(log.status == 200)
            #expect(!log.text.contains("secretCursor"))
            #expect(!log.text.contains("presence"))
        }
    }

    @Test func aStateOverTheLimitIsTooLargeAndTheConnectionStays() async throws {
        try await withServer(configure: { $0.presenceLimit = 32 }) { server in
            let (alice, aliceID, _) = try await join(server, query: "name=alice")
            try await waitForPeers(["alice"], at: alice)
            // 33 bytes as the server writes it: the string and its two quotes.
            alice.send(.presence(id: "p1", state: .string(String(repeating: "x", count: 31))))
            let refusal = try await alice.next()
            guard case .error("p1", "too_large", let message) = refusal else {
                Issue.record("expected too_large, got \(refusal)")
                return
            }
            #expect(message.contains("32"))
            // Exactly the limit is taken, and the connection is still open for everything else.
            let largest = JSON.string(String(repeating: "y", count: 30))
            alice.send(.presence(id: nil, state: largest))
            #expect(try await alice.next() == .presenceChanged([Peer(client: aliceID, name: "alice", state: largest)]))
            alice.send(.action(id: "a1", action: ["type": "increment"]))
            #expect(try await alice.next { $0.isAck } == .ack(id: "a1", version: 1))
        }
    }

    @Test func presenceWithoutStateIsBadMessage() async throws {
        try await withServer { server in
            let (alice, aliceID, _) = try await join(server, query: "name=alice")
            try await waitForPeers(["alice"], at: alice)
            alice.sendRaw(#"{"type":"presence"}"#)
            guard case .error(nil, "bad_message", _) = try await alice.next() else {
                Issue.record("expected bad_message")
                return
            }
            alice.sendRaw(#"{"type":"presence","id":"p2","cursor":[1,2]}"#)
            guard case .error("p2", "bad_message", _) = try await alice.next() else {
                Issue.record("expected bad_message with the id")
                return
            }
            alice.sendRaw(#"{"type":"presence","state":[1,2]}"#)
            #expect(try await alice.next() == .presenceChanged([Peer(client: aliceID, name: "alice", state: [1, 2])]))
        }
    }

    @Test func aReadTokenClientMaySetItsState() async throws {
        let tokens = try await TokenAuthority(secret: Self.secret)
        try await withServer(configure: { $0.tokens = tokens }) { server in
            let read = try await tokens.issue(room: "test", role: .read, lifetime: .seconds(60), subject: "rita")
            let write = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(60), subject: "wes")
            let (reader, readerID, _) = try await join(server, query: "name=rita&token=\(read)")
            let (writer, _, _) = try await join(server, query: "name=wes&token=\(write)")
            try await waitForPeers(["rita", "wes"], at: writer)
            reader.send(.presence(id: nil, state: ["looking": "/items/3"]))
            let changed = try await writer.nextJSON(type: "presence")
            #expect(
                changed["changed"] == [
                    ["client": .string(readerID), "name": "rita", "sub": "rita", "state": ["looking": "/items/3"]]
                ])
        }
    }

    @Test func changedNamesOnlyThePeersAFullListShows() async throws {
        try await withServer(configure: { $0.presencePeers = 1 }) { server in
            let (alice, aliceID, _) = try await join(server, query: "name=alice")
            let (bob, _, _) = try await join(server, query: "name=bob")
            try await waitForPeers(["alice"], at: bob)
            _ = try await alice.next { message in
                if case .presence = message { true } else { false }
            }
            bob.send(.presence(id: nil, state: "unlisted"))
            alice.send(.presence(id: nil, state: "listed"))
            let message = try await alice.next { if case .presenceChanged = $0 { true } else { false } }
            #expect(message == .presenceChanged([Peer(client: aliceID, name: "alice", state: "listed")]))
        }
    }

    // MARK: - The Swift client

    /// Waits until `client`'s peers satisfy `condition`, reading its updates.
    private func waitForPeers(
        of client: RoomClient, _ what: String, _ condition: @escaping @Sendable ([Peer]) -> Bool
    ) async throws {
        if condition(await client.peers) { return }
        try await within(20, what) {
            for await update in client.updates where condition(update.peers) { return }
            throw TimedOut(what: "\(what): the client closed")
        }
    }

    @Test func roomClientsSetStatesAndSeeEachOthers() async throws {
        try await withServer { server in
            let url = "ws://127.0.0.1:\(server.port)/rooms/test"
            let alice = try RoomClient(url: url, name: "alice", transport: sharedTransport)
            let bob = try RoomClient(url: url, name: "bob", transport: sharedTransport)
            try await alice.connect()
            try await bob.connect()
            try await waitForPeers(of: bob, "bob sees alice") { $0.map(\.name) == ["alice", "bob"] }

            // A burst goes out throttled, and the latest state wins.
            for index in 1...500 { try await alice.setPresence(["cursor": .int(index)]) }
            #expect(await alice.presenceState == ["cursor": 500])
            try await waitForPeers(of: bob, "bob sees alice's last state") {
                $0.first { $0.name == "alice" }?.state == ["cursor": 500]
            }
            try await waitForPeers(of: alice, "alice sees her own state") {
                $0.first { $0.name == "alice" }?.state == ["cursor": 500]
            }

            // After a dropped connection the server has forgotten it; the client sets it again.
            await alice.dropConnectionForTesting()
            try await waitForPeers(of: bob, "bob sees alice back with her state") { peers in
                peers.count == 2 && peers.first { $0.name == "alice" }?.state == ["cursor": 500]
                    && peers.first { $0.name == "alice" }?.client != "c1"
            }
            try await alice.setPresence(nil)
            try await waitForPeers(of: bob, "bob sees alice's state cleared") { peers in
                peers.count == 2 && peers.first { $0.name == "alice" }.map { $0.state == nil } == true
            }
            await alice.close()
            await bob.close()
        }
    }
}

extension ServerMessage {
    var isHistory: Bool { if case .history = self { true } else { false } }
}
