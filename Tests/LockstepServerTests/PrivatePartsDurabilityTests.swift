import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Private parts hold where a room goes: reloaded after a restart, and on another server of a PostgreSQL cluster.
@Suite(.timeLimit(.minutes(2))) struct PrivatePartsRestartTests {
    @Test func aReloadedRoomKeepsAlicesHandFromBob() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (tokens, alice, bob) = try await PrivatePartsTests.aliceAndBob()
        let configure: (inout ServerConfiguration) -> Void = {
            $0.tokens = tokens
            $0.privateParts = try! PrivateParts(["/hands/{sub}"])
        }
        try await withStoredServer(in: directory, app: .json, configure: configure) { server in
            let writer = try await Writer.connect(server.port, token: alice)
            try await writer.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/hands","value":{"alice":"SECRET"}}]"#))
            try await writer.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/table","value":1}]"#))
        }
        try await withStoredServer(in: directory, app: .json, configure: configure) { server in
            let reader = try await TestClient.connect(port: server.port, query: "token=\(bob)", using: sharedTransport)
            let resumed = try await TestClient.connect(
                port: server.port, query: "since=0&token=\(bob)", using: sharedTransport)
            _ = await reader.drain(timeout: .milliseconds(300))
            _ = await resumed.drain(timeout: .milliseconds(300))
            var bytes = try await PrivatePartsTests.httpBytes(server.port, token: bob, version: 1)
            for client in [reader, resumed] { bytes += await client.frames.flatMap { $0 } }
            #expect(!PrivatePartsTests.contains(bytes, "SECRET"))
            #expect(PrivatePartsTests.contains(bytes, "table"))
            let own = try await PrivatePartsTests.httpBytes(server.port, token: alice, version: 1)
            #expect(PrivatePartsTests.contains(own, "SECRET"))
        }
    }
}

extension PrivatePartsRestartTests {
    /// An idle room leaves memory and comes back from storage: bob's resume, history and reads after that hold
    /// nothing of alice's hand, and hers still do.
    @Test func anEvictedRoomKeepsAlicesHandFromBob() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (tokens, alice, bob) = try await PrivatePartsTests.aliceAndBob()
        try await withStoredServer(in: directory, app: .json, configure: {
            $0.tokens = tokens
            $0.privateParts = try! PrivateParts(["/hands/{sub}"])
            $0.roomIdle = .milliseconds(200)
        }) { server in
            let writer = try await Writer.connect(server.port, token: alice)
            try await writer.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/hands","value":{"alice":"SECRET"}}]"#))
            try await writer.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/table","value":1}]"#))
            try await writer.ask(PrivatePartsTests.patch(#"[{"op":"replace","path":"/hands/alice","value":"SECRET2"}]"#))
            writer.close()
            try await waitForMetric("lockstep_evictions_total", toReach: 1, port: server.port)

            let resumed = try await TestClient.connect(
                port: server.port, query: "since=0&token=\(bob)", using: sharedTransport)
            resumed.sendRaw(#"{"type":"history","id":"h","limit":100}"#)
            _ = try await resumed.nextJSON(type: "history")
            _ = await resumed.drain(timeout: .milliseconds(300))
            var bytes = await resumed.frames.flatMap { $0 }
            resumed.close()
            try await waitForMetric("lockstep_evictions_total", toReach: 2, port: server.port)
            bytes += try await PrivatePartsTests.httpBytes(server.port, token: bob, version: 2)
            #expect(!PrivatePartsTests.contains(bytes, "SECRET"), "bob received alice's hand after an eviction")
            #expect(PrivatePartsTests.contains(bytes, "table"))
            let own = try await PrivatePartsTests.httpBytes(server.port, token: alice, version: 3)
            #expect(PrivatePartsTests.contains(own, "SECRET2"))
        }
    }
}

@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct PrivatePartsClusterTests {
    @Test func bobOnServerBNeverSeesWhatAlicePutInHerHandThroughServerA() async throws {
        let (tokens, alice, bob) = try await PrivatePartsTests.aliceAndBob()
        try await withCluster(nodes: 2, app: .json, configure: {
            $0.tokens = tokens
            $0.privateParts = try! PrivateParts(["/hands/{sub}"])
        }) { _, servers in
            let reader = try await TestClient.connect(
                port: servers[1].port, query: "token=\(bob)", using: sharedTransport)
            _ = try await reader.nextJSON(type: "snapshot")
            let writer = try await Writer.connect(servers[0].port, token: alice)
            try await writer.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/hands","value":{}}]"#))
            try await writer.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/hands/alice","value":"SECRET"}]"#))
            try await writer.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/table","value":"public"}]"#))
            try await reader.catchUp(to: 3)
            var bytes = await reader.frames.flatMap { $0 }
            bytes += try await PrivatePartsTests.httpBytes(servers[1].port, token: bob, version: 2)
            #expect(!PrivatePartsTests.contains(bytes, "SECRET"))
            #expect(PrivatePartsTests.contains(bytes, "public"))
            #expect(await reader.state == ["hands": [:], "table": "public"])
        }
    }
}
