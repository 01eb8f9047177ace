import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// `POST /rooms/ROOM` (1.3): a request over HTTP is applied in the room's order like a client's, answered with the
/// protocol's statuses, and applied at most once per `Idempotency-Key`.
@Suite(.timeLimit(.minutes(3))) struct HTTPRequestTests {
    static let increment = #"{"type":"action","id":"b1","action":{"type":"increment"}}"#

    @Test(arguments: [false, true]) func aPostIsAppliedInOrderAndEveryClientSeesItsPatch(stored: Bool) async throws {
        let directory = NSTemporaryDirectory() + "http-post-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer(app: .counter, directory: stored ? directory : nil) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            let answer = try await HTTPGet.post(port: server.port, path: "/rooms/test?name=cron", json: Self.increment)
            #expect(answer.status == 200)
            #expect(answer.json == ["room": "test", "version": 1])
            #expect(answer.head.contains("content-type: application/json"))
            let patch = try await client.nextJSON(type: "patch")
            #expect(patch["version"] == 1)
            #expect(patch["cause"]?["client"] == "http")
            #expect(patch["cause"]?["name"] == "cron")
            #expect(patch["cause"]?["id"] == "b1")
            #expect(patch["cause"]?["action"] == ["type": "increment"])

            // Nothing changed: the room's current version.
            let noOp = try await HTTPGet.post(
                port: server.port, path: "/rooms/test", json: #"{"type":"action","action":{"type":"add","amount":0}}"#)
            #expect(noOp.status == 200)
            #expect(noOp.json?["version"] == 1)
        }
    }

    @Test func everyErrorHasItsStatusAndNothingChanges() async throws {
        try await withServer(app: .counter, configure: { $0.maxFrameBytes = 1024 }) { server in
            func post(_ body: String, path: String = "/rooms/test", headers: [String] = []) async throws -> HTTPGet {
                try await HTTPGet.post(port: server.port, path: path, json: body, headers: headers)
            }
            let cases: [(HTTPGet, Int, String)] = [
                (try await post("{not json"), 400, "bad_json"),
                (try await post("[1]"), 400, "bad_json"),
                (try await post(#"{"type":"nonsense"}"#), 400, "bad_message"),
                (try await post(#"{"type":"history"}"#), 400, "bad_message"),
                (try await post(#"{"type":"action","seq":1,"action":{"type":"increment"}}"#), 400, "bad_message"),
                (try await post(Self.increment, path: "/rooms/test?session=bad%20name"), 400, "bad_message"),
                (try await post(Self.increment, path: "/rooms/a%20b"), 400, "bad_message"),
                (try await post(#"{"type":"action","action":{"type":"fly"}}"#), 422, "invalid_action"),
                (try await post(#"{"type":"undo"}"#), 409, "nothing_to_undo"),
                (try await post(#"{"type":"redo"}"#), 409, "nothing_to_redo"),
                (try await post(#"{"type":"revert","to":7}"#), 400, "bad_message"),
                (try await post(String(repeating: " ", count: 2048) + Self.increment), 413, "too_large"),
                (try await post(Self.increment, headers: ["Content-Type: text/plain"]), 415, "bad_message"),
                (try await post(Self.increment, headers: ["Content-Type: application/jsonp"]), 415, "bad_message"),
                (try await post(Self.increment, headers: ["Content-Type: application"]), 415, "bad_message"),
                (try await post(Self.increment, headers: ["Idempotency-Key: " + String(repeating: "k", count: 129)]),
                    400, "bad_message"),
            ]
            for (answer, status, code) in cases {
                #expect(answer.status == status, "\(answer.text)")
                #expect(answer.json?["code"]?.stringValue == code, "\(answer.text)")
                #expect(answer.json?["message"]?.stringValue?.isEmpty == false)
            }
            let other = try await HTTPGet(port: server.port, method: "DELETE", path: "/rooms/test")
            #expect(other.status == 405)
            #expect(other.head.contains("allow: get, head, post, options"))
            // Only refused requests reached the room: it is still a room no one has used.
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").status == 404)
            // The type in any case, with its parameters.
            let typed = try await post(Self.increment, headers: ["Content-Type: Application/JSON ; charset=utf-8"])
            #expect(typed.status == 200, "\(typed.text)")
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["version"] == 1)
        }
    }

    /// libwebsockets reads a request body by its Content-Length only: one in chunks is refused, not read as empty.
    @Test func aBodyInChunksIsLengthRequired() async throws {
        try await withServer(app: .counter) { server in
            let body = #"{"type":"action","action":{"type":"increment"}}"#
            let chunked = String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
            let request = "POST /rooms/test HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + chunked
            let port = server.port
            let answer = try await offThePool { try RawSocket.exchange(port: port, request: request) }
            #expect(answer.hasPrefix("HTTP/1.1 411"), "\(answer)")
            #expect(answer.contains("Content-Length"))
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").status == 404)
        }
    }

    /// A refused request on a room never used leaves it unused: its reads answer 404, in memory and stored, until a
    /// request succeeds (even one that changes nothing) or a client joins.
    @Test(arguments: [false, true]) func aRefusedRequestCreatesNoRoom(stored: Bool) async throws {
        let directory = NSTemporaryDirectory() + "http-unused-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer(app: .counter, directory: stored ? directory : nil) { server in
            func read(_ room: String) async throws -> Int {
                try await HTTPGet(port: server.port, path: "/rooms/\(room)").status
            }
            let refused = try await HTTPGet.post(
                port: server.port, path: "/rooms/ghost", json: #"{"type":"action","action":{"type":"fly"}}"#)
            #expect(refused.status == 422)
            #expect(try await read("ghost") == 404)
            let noOp = #"{"type":"action","action":{"type":"add","amount":0}}"#
            #expect(try await HTTPGet.post(port: server.port, path: "/rooms/ghost", json: noOp).status == 200)
            #expect(try await read("ghost") == 200)
            // A room a client joined exists, refused requests or not.
            let client = try await TestClient.connect(server, room: "joined", using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            let undo = try await HTTPGet.post(port: server.port, path: "/rooms/joined", json: #"{"type":"undo"}"#)
            #expect(undo.status == 409)
            #expect(try await read("joined") == 200)
        }
    }

    /// Refused requests to names nobody uses leave no room in memory with `--memory`, where idle rooms stay: else
    /// anyone could fill the server's memory with rooms by posting to new names.
    @Test func refusedRequestsLeaveNoRoomInMemory() async throws {
        try await withServer(app: .counter) { server in
            for number in 0..<50 {
                let refused = try await HTTPGet.post(
                    port: server.port, path: "/rooms/ghost-\(number)", json: #"{"type":"action","action":{"type":"fly"}}"#)
                #expect(refused.status == 422)
            }
            // Each left in the turn that answered it, before its answer was written.
            #expect(try await metric("lockstep_rooms", port: server.port) == 0)
            let noOp = #"{"type":"action","action":{"type":"add","amount":0}}"#
            #expect(try await HTTPGet.post(port: server.port, path: "/rooms/used", json: noOp).status == 200)
            #expect(try await metric("lockstep_rooms", port: server.port) == 1)
        }
    }

    @Test func theAppsRejectionIs422() async throws {
        try await withServer(app: .todos) { server in
            let answer = try await HTTPGet.post(
                port: server.port, path: "/rooms/test", json: #"{"type":"action","action":{"type":"toggle","id":99}}"#)
            #expect(answer.status == 422)
            #expect(answer.json?["code"] == "rejected")
        }
    }

    @Test(arguments: [false, true]) func aKeyIsAppliedOnceAndAnsweredAlikeUntilItsBodyDiffers(
        stored: Bool
    ) async throws {
        let directory = NSTemporaryDirectory() + "http-key-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer(app: .counter, directory: stored ? directory : nil) { server in
            let key = ["Idempotency-Key: payment-42"]
            let first = try await HTTPGet.post(port: server.port, path: "/rooms/test", json: Self.increment, headers: key)
            #expect(first.json == ["room": "test", "version": 1])
            let again = try await HTTPGet.post(port: server.port, path: "/rooms/test", json: Self.increment, headers: key)
            #expect(again.status == 200)
            #expect(again.json == ["room": "test", "version": 1, "duplicate": true])
            let other = try await HTTPGet.post(
                port: server.port, path: "/rooms/test", json: #"{"type":"action","action":{"type":"decrement"}}"#,
                headers: key)
            #expect(other.status == 422)
            #expect(other.json?["code"] == "idempotency_mismatch")

            // An error is remembered too: the same key answers it again, even once the request would succeed.
            let refusedKey = ["Idempotency-Key: undo-1"]
            let refused = try await HTTPGet.post(
                port: server.port, path: "/rooms/test?session=s", json: #"{"type":"undo","mine":true}"#,
                headers: refusedKey)
            #expect(refused.status == 409)
            _ = try await HTTPGet.post(port: server.port, path: "/rooms/test?session=s", json: Self.increment)
            let replayed = try await HTTPGet.post(
                port: server.port, path: "/rooms/test?session=s", json: #"{"type":"undo","mine":true}"#,
                headers: refusedKey)
            #expect(replayed.status == 409)
            #expect(replayed.json?["code"] == "nothing_to_undo")
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"] == ["count": 2])
        }
    }

    @Test func aKeySurvivesKill9AndRestart() async throws {
        let directory = NSTemporaryDirectory() + "http-key-kill-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory])
        let key = ["Idempotency-Key: cron-2026-11-27"]
        let first = try await HTTPGet.post(port: server.port, path: "/rooms/test", json: Self.increment, headers: key)
        #expect(first.json == ["room": "test", "version": 1])
        server.kill9()
        let restarted = try await ServerProcess.start(arguments: ["--app", "counter", "--data", directory])
        defer { restarted.terminate() }
        let again = try await HTTPGet.post(port: restarted.port, path: "/rooms/test", json: Self.increment, headers: key)
        #expect(again.json == ["room": "test", "version": 1, "duplicate": true])
        #expect(try await HTTPGet(port: restarted.port, path: "/rooms/test").json?["state"] == ["count": 1])
    }

    /// A read shows what is stored, never a change still being written: the version a `GET` answered survives a
    /// `kill -9` that comes right after it, while eight writers keep the room's writes busy.
    @Test func whatAReadShowedSurvivesKill9() async throws {
        for round in 0..<4 {
            let directory = NSTemporaryDirectory() + "http-read-kill-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let arguments = ["--app", "counter", "--data", directory, "--rate-limit", "0"]
            let server = try await ServerProcess.start(arguments: arguments)
            let port = server.port
            let writers = Task {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            while !Task.isCancelled,
                                (try? await HTTPGet.post(port: port, path: "/rooms/test", json: Self.increment)) != nil
                            {}
                        }
                    }
                }
            }
            var shown = 0
            for _ in 0..<30 {
                shown = max(shown, try await HTTPGet(port: port, path: "/rooms/test").json?["version"]?.intValue ?? 0)
            }
            server.kill9()
            writers.cancel()
            await writers.value
            let restarted = try await ServerProcess.start(arguments: arguments)
            defer { restarted.terminate() }
            let stored = try await HTTPGet(port: restarted.port, path: "/rooms/test").json?["version"]?.intValue ?? 0
            #expect(shown > 0)
            #expect(stored >= shown, "round \(round): a read showed version \(shown), the log kept \(stored)")
        }
    }

    @Test func aSessionMakesRequestsItsOwnForUndoMine() async throws {
        try await withServer(app: .counter) { server in
            let alice = try await TestClient.connect(server, query: "session=alice", using: sharedTransport)
            _ = try await alice.nextJSON(type: "snapshot")
            alice.sendRaw(#"{"type":"action","id":"a","action":{"type":"add","amount":10}}"#)
            _ = try await alice.nextJSON(type: "ack")
            let post = { (body: String, query: String) in
                try await HTTPGet.post(port: server.port, path: "/rooms/test" + query, json: body)
            }
            #expect(try await post(Self.increment, "").json?["version"] == 2)
            // Without a session, each request is its own author.
            #expect(try await post(#"{"type":"undo","mine":true}"#, "").json?["code"] == "nothing_to_undo")
            // With alice's session, the request is hers: undo mine takes back her change, not the other one.
            let undo = try await post(#"{"type":"undo","mine":true}"#, "?session=alice")
            #expect(undo.json?["version"] == 3)
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"] == ["count": 1])
        }
    }

    @Test func accessAndPrivatePartsAsOverWebSocket() async throws {
        let (tokens, alice, bob) = try await PrivatePartsTests.aliceAndBob()
        let reader = try await tokens.issue(room: "test", role: .read, lifetime: .seconds(300), subject: "carol")
        let otherRoom = try await tokens.issue(room: "elsewhere", role: .write, lifetime: .seconds(300))
        try await withServer(app: .json, configure: {
            $0.tokens = tokens
            $0.privateParts = try! PrivateParts(["/hands/{sub}"])
        }) { server in
            func post(_ body: String, token: String?) async throws -> HTTPGet {
                try await HTTPGet.post(
                    port: server.port, path: "/rooms/test", json: body,
                    headers: token.map { ["Authorization: Bearer \($0)"] } ?? [])
            }
            let secret = #"{"type":"action","action":{"type":"patch","ops":[{"op":"add","path":"/hands","value":{}}]}}"#
            #expect(try await post(secret, token: alice).status == 200)
            let hand = #"{"type":"action","action":{"type":"patch","ops":[{"op":"add","path":"/hands/alice","value":"SECRET-A"}]}}"#
            let written = try await post(hand, token: alice)
            #expect(written.status == 200)
            let anonymous = try await post(hand, token: nil)
            #expect(anonymous.status == 401 && anonymous.head.contains("www-authenticate: bearer"))
            #expect(try await post(hand, token: reader).json?["code"] == "forbidden")
            #expect(try await post(hand, token: otherRoom).status == 403)
            let copy = #"{"type":"action","action":{"type":"patch","ops":[{"op":"copy","from":"/hands","path":"/all"}]}}"#
            let refused = try await post(copy, token: bob)
            #expect(refused.status == 403)
            #expect(!refused.text.contains("SECRET-A"))
            let probe = #"{"type":"action","action":{"type":"patch","ops":[{"op":"test","path":"/hands/alice","value":"x"}]}}"#
            let probed = try await post(probe, token: bob)
            #expect(probed.status == 403)
            #expect(!probed.text.contains("SECRET-A"))
        }
    }

    @Test func browsersGetCORSForAllowedOriginsOnly() async throws {
        try await withServer(app: .counter, configure: { $0.allowedOrigins = ["https://app.example"] }) { server in
            let preflight = try await HTTPGet(
                port: server.port, method: "OPTIONS", path: "/rooms/test", headers: ["Origin: https://app.example"])
            #expect(preflight.status == 204)
            #expect(preflight.head.contains("access-control-allow-origin: https://app.example"))
            #expect(preflight.head.contains("access-control-allow-methods: get, post"))
            #expect(preflight.head.contains("access-control-allow-headers: authorization, content-type, idempotency-key"))
            let allowed = try await HTTPGet.post(
                port: server.port, path: "/rooms/test", json: Self.increment, headers: ["Origin: https://app.example"])
            #expect(allowed.status == 200)
            #expect(allowed.head.contains("access-control-allow-origin: https://app.example"))
            let read = try await HTTPGet(port: server.port, path: "/rooms/test", headers: ["Origin: https://app.example"])
            #expect(read.head.contains("access-control-allow-origin: https://app.example"))
            // Every answer to the page, whatever it reads and however it ends.
            for path in ["/rooms/test/timers", "/rooms/test?path=bad", "/rooms/test/log?after=x", "/rooms/none"] {
                let answer = try await HTTPGet(port: server.port, path: path, headers: ["Origin: https://app.example"])
                #expect(answer.head.contains("access-control-allow-origin: https://app.example"), "\(path)")
            }
            // A HEAD is answered as its GET, without the body.
            for path in ["/rooms/test", "/rooms/test/log", "/rooms/test/log?follow=true"] {
                let head = try await HTTPGet(
                    port: server.port, method: "HEAD", path: path, headers: ["Origin: https://app.example"])
                #expect(head.status == 200, "\(path): \(head.head)")
                #expect(head.body.isEmpty)
                #expect(head.head.contains("access-control-allow-origin: https://app.example"), "\(path)")
            }
            // A read with a token or `Last-Event-ID` is preflighted too; any other method gets 405 with Allow.
            for path in ["/rooms/test/log", "/rooms/test/timers"] {
                let preflight = try await HTTPGet(
                    port: server.port, method: "OPTIONS", path: path, headers: ["Origin: https://app.example"])
                #expect(preflight.status == 204, "\(path): \(preflight.head)")
                #expect(preflight.head.contains("access-control-allow-origin: https://app.example"))
                let lines = preflight.head.split(separator: "\r\n")
                #expect(lines.contains("access-control-allow-methods: get"))
                #expect(preflight.head.contains("access-control-allow-headers: authorization, last-event-id"))
                let put = try await HTTPGet(port: server.port, method: "PUT", path: path)
                #expect(put.status == 405)
                #expect(put.head.contains("allow: get, head, options"))
                let refused = try await HTTPGet(
                    port: server.port, method: "OPTIONS", path: path, headers: ["Origin: https://evil.example"])
                #expect(refused.status == 403)
                #expect(!refused.head.contains("access-control-allow-origin"))
            }
            #expect(try await HTTPGet(port: server.port, method: "PUT", path: "/metrics").head.contains("allow: get, head"))

            let foreign = try await HTTPGet.post(
                port: server.port, path: "/rooms/test", json: Self.increment, headers: ["Origin: https://evil.example"])
            #expect(foreign.status == 403)
            #expect(!foreign.head.contains("access-control-allow-origin"))
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["version"] == 1)
        }
    }

    @Test func historyRoleAppliesOverHTTP() async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        let writer = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(300), subject: "w")
        try await withServer(app: .counter, configure: {
            $0.tokens = tokens
            $0.historyRole = .admin
        }) { server in
            let auth = ["Authorization: Bearer \(writer)"]
            #expect(try await HTTPGet.post(port: server.port, path: "/rooms/test", json: Self.increment, headers: auth).status == 200)
            let undo = try await HTTPGet.post(port: server.port, path: "/rooms/test", json: #"{"type":"undo"}"#, headers: auth)
            #expect(undo.status == 403)
            #expect(undo.json?["code"] == "forbidden")
        }
    }
}
