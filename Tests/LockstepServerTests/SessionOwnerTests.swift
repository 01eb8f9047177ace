import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// With tokens, a session belongs to its subject: another subject naming the same `session=` has a session of its own.
@Suite(.timeLimit(.minutes(2))) struct SessionOwnerTests {
    /// Writers' tokens for alice, bob, and one without a subject.
    static func tokens() async throws -> (TokenAuthority, alice: String, bob: String, nobody: String) {
        let (tokens, alice, bob) = try await PrivatePartsTests.aliceAndBob()
        let nobody = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300))
        return (tokens, alice, bob, nobody)
    }

    @Test(arguments: [false, true]) func bobNamingAlicesSessionNeitherTakesBackHerChangeNorSharesHerMarks(
        stored: Bool
    ) async throws {
        let (tokens, aliceToken, bobToken, nobodyToken) = try await Self.tokens()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("owner-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer(app: .counter, directory: stored ? directory : nil, configure: {
            $0.tokens = tokens
        }) { server in
            let alice = try await Writer.connect(server.port, session: "alice-laptop", token: aliceToken)
            #expect(try await alice.action(#"{"type":"add","amount":5}"#, seq: 1)["type"] == "ack")
            #expect(try await alice.action(#"{"type":"add","amount":5}"#, seq: 2)["type"] == "ack")

            let bob = try await Writer.connect(server.port, session: "alice-laptop", token: bobToken)
            let snapshot = try #require(await bob.client.frames.first.map { try JSON(parsing: $0) })
            #expect(snapshot["seq"] == 0, "bob's session starts from nothing: \(snapshot)")
            #expect(try await bob.undoMine()["code"] == "nothing_to_undo")
            let first = try await bob.action(#"{"type":"increment"}"#, seq: 1)
            #expect(first["duplicate"] == nil, "bob's seq 1 is his own: \(first)")
            #expect(try await roomState(server.port, token: bobToken) == ["count": 11])

            // A token without a subject is yet another owner of that name.
            let nobody = try await Writer.connect(server.port, session: "alice-laptop", token: nobodyToken)
            #expect(try await nobody.undoMine()["code"] == "nothing_to_undo")

            // Alice's own session still holds her marks and her changes.
            #expect(try await alice.action(#"{"type":"increment"}"#, seq: 2)["duplicate"] == true)
            let undo = try await alice.undoMine()
            #expect(undo["type"] == "ack")
            #expect(try await roomState(server.port, token: aliceToken) == ["count": 6])
            let again = try await Writer.connect(server.port, session: "alice-laptop", token: aliceToken)
            let resumed = try #require(await again.client.frames.first.map { try JSON(parsing: $0) })
            #expect(resumed["seq"] == 2)
        }
    }
}
