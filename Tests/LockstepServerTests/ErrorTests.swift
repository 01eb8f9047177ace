import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTransport
import Testing
import LockstepTestSupport

/// Every error code of the protocol, and input meant to break the server.
@Suite(.timeLimit(.minutes(2))) struct ErrorTests {
    let transport = sharedTransport

    /// Sends `text` and returns the error that answers it.
    private func error(
        for text: String, app: App = .counter, followUp: JSON = ["type": "increment"]
    ) async throws -> (id: String?, code: String) {
        try await withServer(app: app) { server in
            let client = try await TestClient.connect(server, using: transport)
            client.sendRaw(text)
            let reply = try await client.next { if case .error = $0 { true } else { false } }
            guard case .error(let id, let code, let message) = reply else { return (nil, "") }
            #expect(!message.isEmpty)
            // The connection stays usable and the room untouched.
            client.send(.action(id: "after", action: followUp))
            #expect(try await client.next { $0.isAck } == .ack(id: "after", version: 1))
            return (id, code)
        }
    }

    @Test(arguments: [
        "not json", "[1,2,3]", "42", "\"text\"", "{\"type\":\"action\"", "{} trailing",
        String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000),
    ])
    func framesThatAreNotJSONObjectsAreBadJSON(text: String) async throws {
        #expect(try await error(for: text).code == "bad_json")
    }

    @Test func invalidUTF8IsBadJSON() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            client.socket.send([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D])
            let reply = try await client.next { if case .error = $0 { true } else { false } }
            guard case .error(_, let code, _) = reply else { return }
            #expect(code == "bad_json")
        }
    }

    /// Patches that would nest the room deeper than a message may, or copy it into itself until it fills memory, are
    /// rejected; the room stays as it was and the server answers on.
    @Test func patchesThatNestTooDeepOrCopyTheRoomIntoItselfAreRejected() async throws {
        try await withServer(app: .json) { server in
            let client = try await TestClient.connect(server, using: transport)
            _ = try await client.nextJSON(type: "snapshot")
            let deep = String(repeating: "[", count: 400) + String(repeating: "]", count: 400)
            var path = "/d"
            var codes: [JSON] = []
            for number in 0..<2 {
                client.sendRaw(#"{"type":"action","id":"n\#(number)","action":{"type":"patch","ops":[{"op":"add","path":"\#(path)","value":\#(deep)}]}}"#)
                var answer = try await client.nextJSON()
                while answer["type"] != "ack", answer["type"] != "error" { answer = try await client.nextJSON() }
                codes.append(answer["code"] ?? answer["type"] ?? .null)
                if number > 0 { #expect(answer["message"]?.stringValue?.contains("deeper than 512") == true) }
                path += String(repeating: "/0", count: 300)
            }
            #expect(codes == ["ack", "rejected"])
            let text = String(repeating: "x", count: 1000)
            let copies = (0..<24).map { #"{"op":"copy","from":"","path":"/c\#($0)"}"# }.joined(separator: ",")
            let bomb = #"{"type":"action","action":{"type":"patch","ops":[{"op":"add","path":"/s","value":"\#(text)"},\#(copies)]}}"#
            let answer = try await HTTPGet.post(port: server.port, path: "/rooms/test", json: bomb)
            #expect(answer.status == 422)
            #expect(answer.json?["code"] == "rejected")
            #expect(answer.json?["message"]?.stringValue?.contains("more than 16777216 bytes") == true)
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["version"] == 1)
            #expect(room["state"]?.objectValue?.keys.elementsEqual(["d"]) == true)
        }
    }

    /// `lockstep serve --max-change`: the json app's bound on what one patch writes.
    @Test func maxChangeBoundsWhatOnePatchOfTheJSONAppWrites() async throws {
        let server = try await ServerProcess.start(arguments: ["--memory", "--app", "json", "--max-change", "1000"])
        defer { server.terminate() }
        func write(_ count: Int) async throws -> HTTPGet {
            let text = String(repeating: "x", count: count)
            let add = #"{"op":"add","path":"/s","value":"\#(text)"}"#
            let patch = #"{"type":"action","action":{"type":"patch","ops":[\#(add)]}}"#
            return try await HTTPGet.post(port: server.port, path: "/rooms/test", json: patch)
        }
        #expect(try await write(900).status == 200)
        let over = try await write(1_100)
        #expect(over.status == 422)
        #expect(over.json?["message"]?.stringValue?.contains("more than 1000 bytes") == true)
    }

    @Test func binaryFramesAreBadJSON() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            client.socket.send(binary: Array(#"{"type":"undo"}"#.utf8))
            let reply = try await client.next { if case .error = $0 { true } else { false } }
            guard case .error(_, let code, _) = reply else { return }
            #expect(code == "bad_json")
        }
    }

    @Test(
        arguments: [
            (#"{"type":"dance","id":"x1"}"#, "x1"),
            (#"{"type":"action","id":"x2"}"#, "x2"),
            (#"{"id":"x3"}"#, "x3"),
            (#"{"type":7,"id":"x4"}"#, "x4"),
            (#"{"type":"history","id":"x5","limit":-1}"#, "x5"),
            (#"{"type":"undo","id":5}"#, nil),
            ("{\"type\":\"undo\",\"id\":\"\(String(repeating: "i", count: 129))\"}", nil),
        ] as [(String, String?)])
    func malformedMessagesAreBadMessagesEchoingValidIDs(text: String, id: String?) async throws {
        let reply = try await error(for: text)
        #expect(reply.code == "bad_message")
        #expect(reply.id == id)
    }

    @Test func anIDOf128CharactersIsAccepted() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            let id = String(repeating: "é", count: 128)
            client.send(.action(id: id, action: ["type": "increment"]))
            #expect(try await client.next { $0.isAck } == .ack(id: id, version: 1))
        }
    }

    @Test(arguments: [
        #"{"type":"action","id":"i","action":{"type":"explode"}}"#,
        #"{"type":"action","id":"i","action":[1]}"#,
        #"{"type":"action","id":"i","action":"increment"}"#,
        #"{"type":"action","id":"i","action":{"type":"add","amount":"many"}}"#,
        #"{"type":"action","id":"i","action":null}"#,
    ])
    func actionsTheAppDoesNotKnowAreInvalid(text: String) async throws {
        #expect(try await error(for: text) == ("i", "invalid_action"))
    }

    @Test func domainRulesReject() async throws {
        let reply = try await error(
            for: #"{"type":"action","id":"t","action":{"type":"toggle","id":99}}"#, app: .todos,
            followUp: ["type": "add", "title": "after"]
        )
        #expect(reply == ("t", "rejected"))
    }

    @Test func emptyHistoryAnswersNothingToUndoOrRedo() async throws {
        #expect(try await error(for: #"{"type":"undo","id":"u"}"#) == ("u", "nothing_to_undo"))
        #expect(try await error(for: #"{"type":"redo","id":"r"}"#) == ("r", "nothing_to_redo"))
    }

    @Test func aFrameOverTheLimitIsTooLargeAndCloses1009() async throws {
        try await withServer(configure: { $0.maxFrameBytes = 64 * 1024 }) { server in
            let client = try await TestClient.connect(server, using: transport)
            let other = try await TestClient.connect(server, using: transport)
            client.sendRaw(#"{"type":"action","action":""# + String(repeating: "x", count: 10_000_000) + "\"}")
            let reply = try await client.next { if case .error = $0 { true } else { false } }
            guard case .error(_, let code, _) = reply else { return }
            #expect(code == "too_large")
            #expect(await client.closeCode() == 1009)
            other.send(.action(id: "still", action: ["type": "increment"]))
            #expect(try await other.next { $0.isAck } == .ack(id: "still", version: 1))
        }
    }

    @Test func unknownFieldsAreIgnored() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: transport)
            client.sendRaw(#"{"type":"action","id":"u","action":{"type":"increment","colour":"red"},"extra":[1,2]}"#)
            #expect(try await client.next { $0.isAck } == .ack(id: "u", version: 1))
        }
    }

    @Test func pathsOutsideRoomsAreRefused() async throws {
        try await withServer { server in
            for path in [
                "/", "/rooms/", "/rooms/bad%20name", "/rooms/" + String(repeating: "r", count: 129), "/other/x",
            ] {
                await #expect(throws: TransportError.self) {
                    _ = try await WebSocket.connect("ws://127.0.0.1:\(server.port)\(path)", using: transport)
                }
            }
        }
    }
}
