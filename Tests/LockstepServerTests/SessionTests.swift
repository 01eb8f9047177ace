import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import LockstepTransport
import Testing

/// Sessions over real sockets: a request numbered with `seq` is applied once, however often it is sent.
@Suite(.timeLimit(.minutes(2))) struct SessionTests {
    /// An action frame with a `seq`.
    static func request(_ id: String, seq: Int, _ action: String = #"{"type":"increment"}"#) -> String {
        #"{"type":"action","id":"\#(id)","seq":\#(seq),"action":\#(action)}"#
    }

    static func connect(
        _ server: SyncServer, room: String = "test", session: String, extra: String = ""
    ) async throws -> TestClient {
        try await TestClient.connect(server, room: room, query: "session=\(session)" + extra, using: sharedTransport)
    }

    /// Sends a raw request and returns the answer to it (ack or error) as JSON.
    static func answer(to text: String, on client: TestClient) async throws -> JSON {
        client.sendRaw(text)
        while true {
            let json = try await client.nextJSON()
            if ["ack", "error"].contains(json["type"]?.stringValue) { return json }
        }
    }

    @Test func aRepeatedSeqIsAcknowledgedAsDuplicateAndNotApplied() async throws {
        try await withServer { server in
            let client = try await Self.connect(server, session: "s1")
            let snapshot = try await client.nextJSON(type: "snapshot")
            #expect(snapshot["seq"] == 0)
            #expect(snapshot["epoch"]?.stringValue?.isEmpty == false)

            let first = try await Self.answer(to: Self.request("a1", seq: 1), on: client)
            #expect(first == ["type": "ack", "id": "a1", "version": 1])
            let again = try await Self.answer(to: Self.request("a1", seq: 1), on: client)
            #expect(again == ["type": "ack", "id": "a1", "version": 1, "duplicate": true])

            // An error does not move the mark: the same seq applies once the request is valid.
            let invalid = try await Self.answer(to: Self.request("a2", seq: 2, #"{"type":"nope"}"#), on: client)
            #expect(invalid["code"] == "invalid_action")
            #expect(try await Self.answer(to: Self.request("a2", seq: 2), on: client)["duplicate"] == nil)
            // Lower than the mark: a duplicate too, answered with the current version.
            #expect(try await Self.answer(to: Self.request("old", seq: 1), on: client)["version"] == 2)
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"] == ["count": 2])
        }
    }

    @Test func seqWithoutSessionOrOutOfRangeIsBadMessage() async throws {
        try await withServer { server in
            let anonymous = try await TestClient.connect(server, using: sharedTransport)
            let answer = try await Self.answer(to: Self.request("a", seq: 1), on: anonymous)
            #expect(answer["code"] == "bad_message")
            #expect(answer["id"] == "a")

            let client = try await Self.connect(server, session: "s1")
            for seq in ["0", "-1", "9007199254740992", #""1""#, "1.5", "true"] {
                let text = #"{"type":"action","id":"b","seq":\#(seq),"action":{"type":"increment"}}"#
                #expect(try await Self.answer(to: text, on: client)["code"] == "bad_message", "seq \(seq)")
            }
            let largest = #"{"type":"undo","id":"u","seq":9007199254740991}"#
            #expect(try await Self.answer(to: largest, on: client)["code"] == "nothing_to_undo")
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["version"] == 0)
        }
    }

    @Test func aRequestSentAgainAfterReconnectingIsNotAppliedTwice() async throws {
        try await withServer { server in
            let first = try await Self.connect(server, session: "phone")
            let epoch = try #require(try await first.nextJSON(type: "snapshot")["epoch"]?.stringValue)
            for seq in 1...3 { _ = try await Self.answer(to: Self.request("a\(seq)", seq: seq), on: first) }
            first.close()

            let resumed = try await Self.connect(server, session: "phone", extra: "&since=3&epoch=\(epoch)")
            #expect(
                try await resumed.nextJSON() == [
                    "type": "resume", "room": "test", "you": "c2", "version": 3, "epoch": .string(epoch), "seq": 3,
                ])
            #expect(try await Self.answer(to: Self.request("a3", seq: 3), on: resumed)["duplicate"] == true)
            #expect(try await Self.answer(to: Self.request("a4", seq: 4), on: resumed)["version"] == 4)

            let fresh = try await Self.connect(server, session: "phone")
            #expect(try await fresh.nextJSON(type: "snapshot")["seq"] == 4)
        }
    }

    @Test func undoAndRedoAreDeduplicated() async throws {
        try await withServer { server in
            let client = try await Self.connect(server, session: "s")
            _ = try await Self.answer(to: Self.request("a", seq: 1), on: client)
            #expect(try await Self.answer(to: #"{"type":"undo","id":"u","seq":2}"#, on: client)["version"] == 2)
            let undoAgain = try await Self.answer(to: #"{"type":"undo","id":"u","seq":2}"#, on: client)
            #expect(undoAgain == ["type": "ack", "id": "u", "version": 2, "duplicate": true])
            #expect(try await Self.answer(to: #"{"type":"redo","id":"r","seq":3}"#, on: client)["version"] == 3)
            #expect(try await Self.answer(to: #"{"type":"redo","id":"r","seq":3}"#, on: client)["duplicate"] == true)
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["version"] == 3)
            #expect(room["state"] == ["count": 1])
        }
    }

    @Test func aRevertIsDeduplicated() async throws {
        try await withServer { server in
            let client = try await Self.connect(server, session: "s")
            _ = try await Self.answer(to: Self.request("a", seq: 1), on: client)
            _ = try await Self.answer(to: Self.request("b", seq: 2), on: client)
            #expect(try await Self.answer(to: #"{"type":"revert","id":"t","to":0,"seq":3}"#, on: client)["version"] == 3)
            let again = try await Self.answer(to: #"{"type":"revert","id":"t","to":1,"seq":3}"#, on: client)
            #expect(again == ["type": "ack", "id": "t", "version": 3, "duplicate": true])
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(room["version"] == 3)
            #expect(room["state"] == ["count": 0])
        }
    }

    @Test func marksArePerRoomAndPerSession() async throws {
        try await withServer { server in
            let alice = try await Self.connect(server, room: "one", session: "alice")
            _ = try await Self.answer(to: Self.request("a", seq: 7), on: alice)
            #expect(try await Self.connect(server, room: "one", session: "alice").nextJSON()["seq"] == 7)
            #expect(try await Self.connect(server, room: "two", session: "alice").nextJSON()["seq"] == 0)
            let bob = try await Self.connect(server, room: "one", session: "bob")
            #expect(try await bob.nextJSON()["seq"] == 0)
            // Bob's numbering is his own: his seq 1 is new although Alice is at 7.
            #expect(try await Self.answer(to: Self.request("b", seq: 1), on: bob)["duplicate"] == nil)
            // A connection without a session gets no seq.
            #expect(try await TestClient.connect(server, room: "one", using: sharedTransport).nextJSON()["seq"] == nil)
        }
    }

    @Test func aNoOpActionMovesTheMarkDurably() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-noop-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let epoch = try await withServer(directory: directory) { server in
            let client = try await Self.connect(server, session: "s")
            let epoch = try #require(try await client.nextJSON()["epoch"]?.stringValue)
            let ack = try await Self.answer(to: Self.request("r", seq: 5, #"{"type":"reset"}"#), on: client)
            #expect(ack == ["type": "ack", "id": "r", "version": 0])
            return epoch
        }
        try await withServer(directory: directory) { server in
            let snapshot = try await Self.connect(server, session: "s").nextJSON()
            #expect(snapshot["seq"] == 5)
            #expect(snapshot["epoch"] == .string(epoch))
        }
    }

    @Test func theRoomEpochLastsAcrossRestartsAndNotAcrossDataDirectories() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-epoch-\(UUID().uuidString)"
        let other = directory + "-other"
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: other)
        }
        func epoch(in directory: String?) async throws -> String {
            try await withServer(directory: directory) { server in
                let client = try await TestClient.connect(server, using: sharedTransport)
                let epoch = try #require(try await client.nextJSON()["epoch"]?.stringValue)
                client.send(.action(id: "a", action: ["type": "increment"]))
                _ = try await client.next { $0.isAck }
                #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["epoch"] == .string(epoch))
                return epoch
            }
        }
        let first = try await epoch(in: directory)
        #expect(try await epoch(in: directory) == first)
        #expect(try await epoch(in: other) != first)
        #expect(try await epoch(in: nil) != first)
    }

    @Test func resumingWithAnotherEpochGetsASnapshot() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            let epoch = try #require(try await client.nextJSON()["epoch"]?.stringValue)
            client.send(.action(id: "a", action: ["type": "increment"]))
            _ = try await client.next { $0.isAck }

            let wrong = try await TestClient.connect(server, query: "since=0&epoch=x\(epoch)", using: sharedTransport)
            #expect(try await wrong.nextJSON()["type"] == "snapshot")
            let right = try await TestClient.connect(server, query: "since=0&epoch=\(epoch)", using: sharedTransport)
            let resume = try await right.nextJSON()
            #expect(resume["type"] == "resume")
            #expect(resume["epoch"] == .string(epoch))
            let plain = try await TestClient.connect(server, query: "since=0", using: sharedTransport)
            #expect(try await plain.nextJSON()["type"] == "resume")
        }
    }

    @Test func aRoomKeepsAtMostSessionLimitMarks() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-limit-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configure = { (configuration: inout ServerConfiguration) in
            configuration.sessionLimit = 3
        }
        try await withServer(directory: directory, configure: configure) { server in
            for number in 1...5 {
                let client = try await Self.connect(server, session: "s\(number)")
                _ = try await Self.answer(to: Self.request("a", seq: 1), on: client)
                client.close()
            }
            let marks = try await Self.marks(of: 1...5, in: server)
            #expect(marks == [0, 0, 1, 1, 1])
        }
        // The stored marks hold the same bound.
        try await withServer(directory: directory, configure: configure) { server in
            let marks = try await Self.marks(of: 1...5, in: server)
            #expect(marks == [0, 0, 1, 1, 1])
        }
    }

    @Test func idleSessionsAreForgotten() async throws {
        try await withServer(configure: { $0.sessionIdle = .milliseconds(300) }) { server in
            let early = try await Self.connect(server, session: "early")
            _ = try await Self.answer(to: Self.request("a", seq: 1), on: early)
            // A real wait past the idle limit: session marks keep wall-clock time (they must mean the same after a
            // restart), not the server's clock. A slower machine only waits longer.
            try await Task.sleep(for: .milliseconds(400))
            let late = try await Self.connect(server, session: "late")
            _ = try await Self.answer(to: Self.request("a", seq: 1), on: late)
            #expect(try await Self.connect(server, session: "early").nextJSON()["seq"] == 0)
            #expect(try await Self.connect(server, session: "late").nextJSON()["seq"] == 1)
        }
    }

    @Test func acknowledgedMarksSurviveKill9() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-kill-marks-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory, "--rate-limit", "0"])
        let url = "ws://127.0.0.1:\(server.port)/rooms/test?session=crash"
        let socket = try await WebSocket.connect(url, using: sharedTransport)
        var messages = socket.messages.makeAsyncIterator()
        var next = 1
        var lastAcked = 0
        func sendUpTo(_ limit: Int) {
            while next <= limit {
                socket.send(Array(Self.request("a\(next)", seq: next).utf8))
                next += 1
            }
        }
        // 200 requests in flight; the server dies somewhere in the middle of the stream.
        sendUpTo(200)
        while let message = await messages.next() {
            guard case .text(let bytes) = message, case .ack(let id?, _) = try ServerMessage(json: JSON(parsing: bytes))
            else { continue }
            lastAcked = max(lastAcked, Int(id.dropFirst()) ?? 0)
            if lastAcked >= 1_000 {
                server.kill9()
                break
            }
            sendUpTo(lastAcked + 200)
        }

        let restarted = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory])
        defer { restarted.terminate() }
        let client = try await TestClient.connect(
            port: restarted.port, query: "session=crash", using: sharedTransport)
        let snapshot = try await client.nextJSON()
        let mark = try #require(snapshot["seq"]?.intValue)
        #expect(mark >= lastAcked, "an acknowledged mark was lost")
        // Requests apply in seq order, one increment each: the mark and the count agree.
        #expect(snapshot["state"] == ["count": .int(mark)])
        // Sending everything again from before the kill applies only what the server does not have.
        for seq in (lastAcked - 50)...(next + 50) {
            let answer = try await Self.answer(to: Self.request("b\(seq)", seq: seq), on: client)
            #expect(answer["duplicate"] == (seq <= mark ? true : nil), "seq \(seq), mark \(mark)")
        }
        #expect(try await HTTPGet(port: restarted.port, path: "/rooms/test").json?["state"] == ["count": .int(next + 50)])
    }

    @Test(arguments: ["bad!", String(repeating: "x", count: 65), ""])
    func anInvalidSessionNameIsRefusedWith400(name: String) async throws {
        try await withServer { server in
            var socket = try RawWebSocket(port: server.port, path: "/rooms/test?session=\(name)")
            defer { socket.close() }
            #expect(try socket.status() == 400)
        }
    }
}

extension SessionTests {
    /// The mark each session `s1`, `s2`, ... has in room "test", as a new connection's snapshot reports it.
    static func marks(of sessions: ClosedRange<Int>, in server: SyncServer) async throws -> [JSON?] {
        var marks: [JSON?] = []
        for number in sessions { marks.append(try await connect(server, session: "s\(number)").nextJSON()["seq"]) }
        return marks
    }
}
