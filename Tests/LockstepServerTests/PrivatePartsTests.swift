import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Private parts over real sockets and HTTP: every byte bob can get, and alice's secret is never in it.
@Suite(.timeLimit(.minutes(2))) struct PrivatePartsTests {
    static func patch(_ ops: String) -> String { #"{"type":"action","action":{"type":"patch","ops":\#(ops)}}"# }

    /// A token authority, and a writer's token of room `test` for alice and for bob (their subjects).
    static func aliceAndBob() async throws -> (TokenAuthority, alice: String, bob: String) {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        let alice = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300), subject: "alice")
        let bob = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300), subject: "bob")
        return (tokens, alice, bob)
    }

    static func withPrivateServer(
        _ body: (SyncServer, _ alice: String, _ bob: String) async throws -> Void
    ) async throws {
        let (tokens, alice, bob) = try await PrivatePartsTests.aliceAndBob()
        try await withServer(app: .json, configure: {
            $0.tokens = tokens
            $0.privateParts = try! PrivateParts(["/hands/{sub}"])
        }) { server in try await body(server, alice, bob) }
    }

    /// Everything bob reads over HTTP with his token.
    static func httpBytes(_ port: Int, token: String, version: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for path in [
            "/rooms/test", "/rooms/test?version=\(version)", "/rooms/test/log?after=0", "/rooms/test?path=%2Fhands",
            "/rooms/test/log", "/rooms/test?version=2&path=%2Fhands",
        ] {
            bytes += try await HTTPGet(port: port, path: path, headers: ["Authorization: Bearer \(token)"]).body
        }
        return bytes
    }

    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        String(decoding: bytes, as: UTF8.self).contains(text)
    }

    @Test func bobNeverReceivesAlicesHandOnAnyChannel() async throws {
        try await Self.withPrivateServer { server, aliceToken, bobToken in
            let alice = try await Writer.connect(server.port, session: "a", token: aliceToken)
            let bob = try await Writer.connect(server.port, session: "b", token: bobToken)
            let bobHands = try await TestClient.connect(
                port: server.port, query: "path=%2Fhands&token=\(bobToken)", using: sharedTransport)
            #expect(try await alice.ask(Self.patch(#"[{"op":"add","path":"/hands","value":{}}]"#))["type"] == "ack")
            try await alice.ask(Self.patch(#"[{"op":"add","path":"/hands/alice","value":{"card":"SECRET-A"}}]"#))
            try await bob.ask(Self.patch(#"[{"op":"add","path":"/hands/bob","value":{"card":"bob-card"}}]"#))
            try await alice.ask(Self.patch(#"[{"op":"add","path":"/table","value":["public"]}]"#))
            try await alice.ask(Self.patch(
                #"[{"op":"replace","path":"/hands/alice/card","value":"SECRET-A2"},{"op":"add","path":"/table/-","value":"x"}]"#))

            // Bob may not read, write or overwrite alice's hand.
            for ops in [
                #"[{"op":"test","path":"/hands/alice/card","value":"SECRET-A2"}]"#,
                #"[{"op":"add","path":"/hands/alice/extra","value":1}]"#,
                #"[{"op":"replace","path":"/hands","value":{}}]"#,
                #"[{"op":"copy","from":"/hands/alice","path":"/stolen"}]"#,
                #"[{"op":"add","path":"/hands/carol","value":1}]"#,
            ] {
                #expect(try await bob.ask(Self.patch(ops))["code"] == "forbidden", "\(ops)")
            }
            // Room-wide undo, redo and revert still work, and still hide alice's hand from bob.
            try await bob.ask(#"{"type":"undo"}"#)
            try await bob.ask(#"{"type":"redo"}"#)
            try await bob.ask(#"{"type":"revert","to":3}"#)
            bob.client.sendRaw(#"{"type":"history","id":"h","limit":100}"#)
            _ = try await bob.client.nextJSON(type: "history")
            let version = try await alice.ask(#"{"type":"undo"}"#)["version"]?.intValue ?? 0

            let resumed = try await TestClient.connect(
                port: server.port, query: "since=1&token=\(bobToken)", using: sharedTransport)
            _ = await bob.client.drain(timeout: .milliseconds(300))
            _ = await bobHands.drain(timeout: .milliseconds(300))
            _ = await resumed.drain(timeout: .milliseconds(300))
            _ = await alice.client.drain(timeout: .milliseconds(300))

            var bobBytes = try await Self.httpBytes(server.port, token: bobToken, version: 5)
            for client in [bob.client, bobHands, resumed] { bobBytes += await client.frames.flatMap { $0 } }
            #expect(!Self.contains(bobBytes, "SECRET-A"), "bob received alice's hand")
            #expect(Self.contains(bobBytes, "bob-card"), "bob sees his own hand")
            #expect(Self.contains(bobBytes, "public"), "bob sees the public table")

            let aliceBytes = try await Self.httpBytes(server.port, token: aliceToken, version: 5)
                + (await alice.client.frames.flatMap { $0 })
            #expect(Self.contains(aliceBytes, "SECRET-A2"))
            #expect(!Self.contains(aliceBytes, "bob-card"))
            #expect(version > 8)
        }
    }

    @Test func aChangeBobMayNotSeeWhollyReachesHimWithoutItsAction() async throws {
        try await Self.withPrivateServer { server, aliceToken, bobToken in
            let alice = try await Writer.connect(server.port, token: aliceToken)
            let bob = try await Writer.connect(server.port, token: bobToken)
            try await alice.ask(Self.patch(#"[{"op":"add","path":"/hands","value":{"alice":{"card":"c"}}}]"#))
            try await alice.ask(Self.patch(
                #"[{"op":"add","path":"/table","value":1},{"op":"replace","path":"/hands/alice/card","value":"SECRET"}]"#))
            _ = await bob.client.drain(timeout: .milliseconds(300))
            let patches = try await bob.client.frames.map { try JSON(parsing: $0) }.filter { $0["type"] == "patch" }
            #expect(patches.last?["ops"] == [["op": "add", "path": "/table", "value": 1]])
            #expect(patches.last?["cause"]?["action"] == nil)
            #expect(patches.last?["cause"]?["kind"] == "action")
        }
    }

    @Test func aServerWithPrivatePartsAndNoTokensDoesNotStart() throws {
        var configuration = ServerConfiguration(app: .json)
        configuration.port = 0
        configuration.privateParts = try PrivateParts(["/hands/{sub}"])
        #expect(throws: AccessError.privatePartsWithoutTokens) { try SyncServer(configuration: configuration) }
    }

    @Test func anAppWithPrivatePartsAndNoTokensSaysTheAppNotTheOption() throws {
        var configuration = ServerConfiguration(app: PrivateLeakTests.cards)
        configuration.port = 0
        let error = #expect(throws: AccessError.self) { try SyncServer(configuration: configuration) }
        #expect(error == .appPrivatePartsWithoutTokens(app: "cards"))
        #expect(error?.message.contains("--private") == false)
    }
}
