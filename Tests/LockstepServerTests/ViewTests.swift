import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Views over real sockets: a client follows part of a room (`?path=`) and gets exactly what happens there.
@Suite(.timeLimit(.minutes(2))) struct ViewTests {
    static func patch(_ ops: String) -> String { #"{"type":"patch","ops":\#(ops)}"# }

    /// A client of `path` (percent-encoded here), with its first message: its snapshot, or its resume.
    static func view(_ port: Int, _ path: String, query: String = "") async throws -> (TestClient, JSON) {
        let encoded = path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? path
        let client = try await TestClient.connect(
            port: port, query: "path=\(encoded)" + (query.isEmpty ? "" : "&\(query)"), using: sharedTransport)
        while true {
            let first = try await client.nextJSON()
            if first["type"] == "snapshot" || first["type"] == "resume" { return (client, first) }
        }
    }

    /// The patches a client received, in order, after reading everything that came within a short while.
    static func patches(of client: TestClient) async throws -> [JSON] {
        _ = await client.drain(timeout: .milliseconds(300))
        return try await client.frames.map { try JSON(parsing: $0) }.filter { $0["type"] == "patch" }
    }

    @Test func aViewGetsItsValueAndOnlyTheChangesInsideItRelativeToIt() async throws {
        try await withServer(app: .json) { server in
            let writer = try await Writer.connect(server.port)
            try await writer.action(Self.patch(#"[{"op":"add","path":"/boards","value":{"7":{"cards":[]}}}]"#))
            let (board, snapshot) = try await Self.view(server.port, "/boards/7")
            #expect(snapshot["path"] == "/boards/7")
            #expect(snapshot["state"] == ["cards": []])
            #expect(snapshot["version"] == 1)
            let (missing, nothing) = try await Self.view(server.port, "/boards/8")
            #expect(nothing["state"] == .null)
            // Presence reaches views too: the board's client sees the second view join.
            let presence = try await board.nextJSON(type: "presence")
            #expect(presence["peers"]?.arrayValue?.isEmpty == false)

            try await writer.action(Self.patch(#"[{"op":"add","path":"/boards/7/cards/-","value":"plan"}]"#))
            try await writer.action(Self.patch(#"[{"op":"add","path":"/other","value":1}]"#))
            try await writer.action(Self.patch(#"[{"op":"add","path":"/boards/8","value":{"cards":[]}}]"#))
            let seen = try await Self.patches(of: board)
            #expect(seen.map { $0["version"] } == [2])
            #expect(seen.first?["ops"] == [["op": "add", "path": "/cards/0", "value": "plan"]])
            #expect(seen.first?["cause"]?["action"] != nil)
            let created = try await Self.patches(of: missing)
            #expect(created.map { $0["version"] } == [4])
            #expect(created.first?["ops"] == [["op": "replace", "path": "", "value": ["cards": []]]])
        }
    }

    @Test func aChangeAboveTheViewReplacesItWholeAndAGoneValueIsNull() async throws {
        try await withServer(app: .json) { server in
            let writer = try await Writer.connect(server.port)
            try await writer.action(Self.patch(#"[{"op":"add","path":"/list","value":["a","b","c"]}]"#))
            let (second, _) = try await Self.view(server.port, "/list/1")
            try await writer.action(Self.patch(#"[{"op":"remove","path":"/list/0"}]"#))
            try await writer.action(Self.patch(#"[{"op":"add","path":"/list/-","value":"d"}]"#))
            try await writer.action(Self.patch(#"[{"op":"remove","path":"/list"}]"#))
            let seen = try await Self.patches(of: second)
            #expect(seen.map { $0["version"] } == [2, 4])
            #expect(seen.map { $0["ops"] } == [
                [["op": "replace", "path": "", "value": "c"]], [["op": "replace", "path": "", "value": .null]],
            ])
            #expect(await second.state == .null)
        }
    }

    @Test func aViewResumesWithThePatchesThatTouchedItOrASnapshot() async throws {
        try await withServer(app: .json) { server in
            let writer = try await Writer.connect(server.port)
            try await writer.action(Self.patch(#"[{"op":"add","path":"/a","value":{"n":0}}]"#))
            let (first, snapshot) = try await Self.view(server.port, "/a")
            let epoch = try #require(snapshot["epoch"]?.stringValue)
            try await writer.action(Self.patch(#"[{"op":"replace","path":"/a/n","value":1}]"#))
            try await writer.action(Self.patch(#"[{"op":"add","path":"/b","value":1}]"#))
            try await writer.action(Self.patch(#"[{"op":"replace","path":"/a/n","value":2}]"#))
            _ = try await Self.patches(of: first)

            let (again, resume) = try await Self.view(server.port, "/a", query: "since=2&epoch=\(epoch)")
            _ = again
            #expect(resume["type"] == "resume")
            #expect(resume["path"] == "/a")
            let (resumed, _) = try await Self.view(server.port, "/a", query: "since=2")
            let missed = try await Self.patches(of: resumed)
            #expect(missed.map { $0["version"] } == [4])
            #expect(missed.first?["ops"] == [["op": "replace", "path": "/n", "value": 2]])
            // Before the view was opened, within the room's resume window: the room's patches, through the view.
            let (late, old) = try await Self.view(server.port, "/a", query: "since=0")
            #expect(old["type"] == "resume")
            #expect(try await Self.patches(of: late).map { $0["version"] } == [1, 2, 4])
            // Beyond the window: a snapshot.
            let (far, ahead) = try await Self.view(server.port, "/a", query: "since=9")
            _ = far
            #expect(ahead["type"] == "snapshot")
            #expect(ahead["state"] == ["n": 2])
        }
    }

    @Test func httpReadsAnswerWithTheValueAtThePath() async throws {
        try await withServer(app: .json) { server in
            let writer = try await Writer.connect(server.port)
            try await writer.action(Self.patch(#"[{"op":"add","path":"/a~0b","value":{"x":[1,2]}}]"#))
            try await writer.action(Self.patch(#"[{"op":"add","path":"/a~0b/x/-","value":3}]"#))
            let now = try await HTTPGet(port: server.port, path: "/rooms/test?path=%2Fa~0b%2Fx")
            let epoch = try #require(now.json?["epoch"])
            #expect(now.json == ["room": "test", "version": 2, "path": "/a~0b/x", "state": [1, 2, 3], "epoch": epoch])
            let then = try await HTTPGet(port: server.port, path: "/rooms/test?version=1&path=%2Fa~0b%2Fx")
            #expect(then.json == ["room": "test", "version": 1, "path": "/a~0b/x", "state": [1, 2]])
            let bad = try await HTTPGet(port: server.port, path: "/rooms/test?path=nope")
            #expect(bad.status == 400)
        }
    }

    @Test func aMalformedPathIsRefusedWith400() async throws {
        try await withServer(app: .json) { server in
            var socket = try RawWebSocket(port: server.port, path: "/rooms/test?path=a%2Fb")
            #expect(try socket.status() == 400)
            socket.close()
        }
    }
}
