import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// A view, or a client under private parts, that reconnects within the room's resume window resumes with the patches
/// that touched it, even when no client of its view stayed connected.
@Suite(.timeLimit(.minutes(2))) struct ViewResumeTests {
    static func patch(_ ops: String) -> String { #"{"type":"action","action":{"type":"patch","ops":\#(ops)}}"# }

    /// Applies `patches` (messages) to `state`, checking that their versions increase.
    static func apply(_ patches: [JSON], to state: JSON) throws -> JSON {
        var state = state
        var last = -1
        for patch in patches {
            let version = try #require(patch["version"]?.intValue)
            #expect(version > last)
            last = version
            try JSONPatch(json: try #require(patch["ops"])).apply(to: &state)
        }
        return state
    }

    @Test(arguments: [false, true]) func aViewWhoseClientsAllLeftResumesFromTheRoomsWindow(stored: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("view-resume-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer(app: .json, directory: stored ? directory : nil) { server in
            let writer = try await Writer.connect(server.port)
            try await writer.ask(Self.patch(#"[{"op":"add","path":"/boards","value":{"7":[],"8":[]}}]"#))
            try await writer.ask(Self.patch(#"[{"op":"add","path":"/boards/8/-","value":"first"}]"#))
            let (board, snapshot) = try await ViewTests.view(server.port, "/boards/8")
            #expect(snapshot["version"] == 2)
            let held = try #require(snapshot["state"])
            board.close()

            try await Self.changeTheBoards(writer)
            try await Self.expectBoard8Resumes(server.port, from: held)
        }
    }

    /// The room's history starts over only with its epoch: a view resumes across a restart of the server, and once
    /// the room was read back after leaving memory, as the whole room does.
    @Test func aViewResumesAfterTheServerRestarts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("view-restart-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let held = try await withServer(app: .json, directory: directory) { server in
            let writer = try await Writer.connect(server.port)
            try await writer.ask(Self.patch(#"[{"op":"add","path":"/boards","value":{"7":[],"8":[]}}]"#))
            try await writer.ask(Self.patch(#"[{"op":"add","path":"/boards/8/-","value":"first"}]"#))
            let (board, snapshot) = try await ViewTests.view(server.port, "/boards/8")
            board.close()
            try await Self.changeTheBoards(writer)
            return try #require(snapshot["state"])
        }
        try await withServer(app: .json, directory: directory) { server in
            try await Self.expectBoard8Resumes(server.port, from: held)
        }
    }

    /// 13 changes after version 2: 5 touch board 8, one of them from above it; one more from above leaves it as it
    /// was.
    static func changeTheBoards(_ writer: Writer) async throws {
        for index in 0..<13 {
            let ops: String
            switch index {
            case 1, 4, 9: ops = #"[{"op":"add","path":"/boards/8/-","value":"card \#(index)"}]"#
            case 6: ops = #"[{"op":"replace","path":"/boards","value":{"7":[],"8":["reset"]}}]"#
            case 11: ops = #"[{"op":"remove","path":"/boards/8/0"}]"#
            case 12: ops = #"[{"op":"replace","path":"/boards","value":{"7":[],"8":["card 9"]}}]"#
            default: ops = #"[{"op":"add","path":"/boards/7/-","value":\#(index)}]"#
            }
            #expect(try await writer.ask(Self.patch(ops))["type"] == "ack")
        }
    }

    /// A view of board 8 that saw version 2 (`held`) resumes with the 5 changes that touched it since.
    static func expectBoard8Resumes(_ port: Int, from held: JSON) async throws {
        let (again, resume) = try await ViewTests.view(port, "/boards/8", query: "since=2")
        #expect(resume["type"] == "resume", "\(resume)")
        #expect(resume["path"] == "/boards/8")
        let missed = try await ViewTests.patches(of: again)
        #expect(missed.map { $0["version"] } == [4, 7, 9, 12, 14])
        #expect(missed.dropFirst().first?["ops"] == [["op": "add", "path": "/2", "value": "card 4"]])
        let expected = try await HTTPGet(port: port, path: "/rooms/test?path=%2Fboards%2F8").json?["state"]
        #expect(try Self.apply(missed, to: held) == expected)
    }

    @Test func aPrivateReaderResumesWithWhatItMaySeeAndNothingElse() async throws {
        let (tokens, aliceToken, bobToken) = try await PrivatePartsTests.aliceAndBob()
        try await withServer(app: .json, configure: {
            $0.tokens = tokens
            $0.privateParts = try! PrivateParts(["/hands/{sub}"])
        }) { server in
            let alice = try await Writer.connect(server.port, token: aliceToken)
            try await alice.ask(
                Self.patch(#"[{"op":"add","path":"/hands","value":{}},{"op":"add","path":"/t","value":0}]"#))
            let bob = try await TestClient.connect(
                port: server.port, query: "token=\(bobToken)", using: sharedTransport)
            let snapshot = try await bob.nextJSON(type: "snapshot")
            bob.close()

            try await alice.ask(Self.patch(#"[{"op":"add","path":"/hands/alice","value":{"card":"SECRET-A"}}]"#))
            try await alice.ask(Self.patch(#"[{"op":"replace","path":"/t","value":1}]"#))
            try await alice.ask(Self.patch(#"[{"op":"replace","path":"/hands/alice/card","value":"SECRET-A2"}]"#))
            try await alice.ask(Self.patch(
                #"[{"op":"replace","path":"/t","value":2},{"op":"add","path":"/hands/alice/n","value":"SECRET-N"}]"#))

            let again = try await TestClient.connect(
                port: server.port, query: "since=1&token=\(bobToken)", using: sharedTransport)
            let resume = try await again.nextJSON()
            #expect(resume["type"] == "resume", "\(resume)")
            let missed = try await ViewTests.patches(of: again)
            #expect(missed.map { $0["version"] } == [3, 5])
            #expect(missed.last?["cause"]?["action"] == nil)
            let bytes = await again.frames.flatMap { $0 }
            #expect(!PrivatePartsTests.contains(bytes, "SECRET"))
            let expected = try await roomState(server.port, token: bobToken)
            #expect(try Self.apply(missed, to: try #require(snapshot["state"])) == expected)
        }
    }
}
