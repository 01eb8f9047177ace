import Clocks
import Foundation
import Glibc
// `timeval` members resolve through this shim module.
import SwiftOverlayShims
import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepTestSupport
import Testing

/// `GET /rooms/ROOM/log?after=V&follow=true`: PROTOCOL 1.3 "Following a room's changes", over real sockets.
@Suite(.timeLimit(.minutes(3))) struct FollowTests {
    static let increment = #"{"type":"increment"}"#

    /// The versions of a follower's lines, the snapshot's first.
    static func versions(_ lines: [JSON]) -> [Int] { lines.compactMap { $0["version"]?.intValue } }

    /// The state a follower has: its snapshot with every patch applied in order.
    static func state(of lines: [JSON]) throws -> JSON {
        var state = try #require(lines.first?["state"])
        for line in lines.dropFirst() {
            guard case .patch(_, let ops, _, _, _) = try ServerMessage(json: line) else { continue }
            try ops.apply(to: &state)
        }
        return state
    }

    /// Sends `count` actions without waiting, ids `prefix1`…, then waits for the last one's ack.
    static func send(
        _ count: Int, _ action: String, prefix: String, through writer: Writer
    ) async throws {
        try await send(count, prefix: prefix, through: writer) { _ in action }
    }

    /// Sends `count` actions, `action(n)` the nth, without waiting, ids `prefix1`…, then waits for the last one's ack.
    static func send(
        _ count: Int, prefix: String, through writer: Writer, _ action: (Int) -> String
    ) async throws {
        for index in 1...count {
            writer.client.sendRaw(#"{"type":"action","id":"\#(prefix)\#(index)","action":\#(action(index))}"#)
        }
        _ = try await writer.client.next { if case .ack("\(prefix)\(count)", _) = $0 { true } else { false } }
    }

    @Test func aFollowerGetsTheRecordingThenEveryLaterChangeContiguously() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory, configure: { $0.rateLimit = 0 }) { server in
            let first = try await Writer.connect(server.port)
            for _ in 1...3 { try await first.action(Self.increment) }
            let follower = try await FollowReader.open(port: server.port, path: "/rooms/test/log?after=1&follow=true")
            defer { follower.close() }
            let start = try await follower.wait("the recording") { $0.lines.count == 3 }
            #expect(start.status == 200)
            #expect(start.head?.contains("content-type: application/x-ndjson") == true)
            #expect(start.head?.contains("transfer-encoding: chunked") == true)
            #expect(start.lines.first?["type"] == "snapshot")
            #expect(start.lines.first?["state"] == ["count": 1])
            #expect(Self.versions(start.lines) == [1, 2, 3])

            // Two writers at once: every change, in the room's one order, once.
            let second = try await Writer.connect(server.port)
            async let firsts: Void = Self.send(100, Self.increment, prefix: "a", through: first)
            async let seconds: Void = Self.send(100, #"{"type":"add","amount":2}"#, prefix: "b", through: second)
            _ = try await (firsts, seconds)
            let all = try await follower.wait("every change") { $0.lines.last?["version"] == 203 }
            #expect(Self.versions(all.lines) == Array(1...203))
            #expect(try Self.state(of: all.lines) == ["count": 303])
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"] == ["count": 303])
            #expect(!all.ended && !all.closed, "the response stays open")
            #expect(await server.followerCount(of: "test") == 1)
        }
    }

    @Test func serverSentEventsCarryTheVersionAsTheirIdAndLastEventIDResumes() async throws {
        try await withServer { server in
            let writer = try await Writer.connect(server.port)
            for _ in 1...3 { try await writer.action(Self.increment) }
            let events = try await FollowReader.open(
                port: server.port, path: "/rooms/test/log?after=0&follow=true", headers: ["Accept: text/event-stream"])
            defer { events.close() }
            let start = try await events.wait("the recording as events") { $0.events.events.count == 4 }
            #expect(start.head?.contains("content-type: text/event-stream") == true)
            #expect(String(decoding: start.body, as: UTF8.self).hasPrefix("id: 0\ndata: {\"type\":\"snapshot\""))
            #expect(start.events.events.map(\.id) == ["0", "1", "2", "3"])
            #expect(start.events.events.map { $0.data?["version"] } == [0, 1, 2, 3])
            #expect(start.events.events.first?.data?["state"] == ["count": 0])

            try await writer.action(Self.increment)
            let later = try await events.wait("a later change as an event") { $0.events.events.count == 5 }
            #expect(later.events.events.last?.id == "4")
            #expect(later.events.events.last?.data?["type"] == "patch")

            // A reconnecting EventSource sends the last id it got: it wins over `after=`.
            let resumed = try await FollowReader.open(
                port: server.port, path: "/rooms/test/log?after=0&follow=true",
                headers: ["Accept: text/event-stream", "Last-Event-ID: 2"])
            defer { resumed.close() }
            let again = try await resumed.wait("the events after 2") { $0.events.events.count == 3 }
            #expect(again.events.events.map(\.id) == ["2", "3", "4"])
            #expect(again.events.events.first?.data?["type"] == "snapshot")
            #expect(again.events.events.first?.data?["state"] == ["count": 2])
            // The same header resumes an NDJSON follower too.
            let lines = try await FollowReader.open(
                port: server.port, path: "/rooms/test/log?follow=true", headers: ["Last-Event-ID: 3"])
            defer { lines.close() }
            #expect(Self.versions(try await lines.wait("the lines after 3") { $0.lines.count == 2 }.lines) == [3, 4])
        }
    }

    @Test func badFollowRequestsGetClearErrors() async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        try await withServer(configure: { $0.tokens = tokens }) { server in
            let token = try await tokens.issue(room: "*", role: .write, lifetime: .seconds(60))
            let writer = try await Writer.connect(server.port, token: token)
            try await writer.action(Self.increment)
            let bearer = "Authorization: Bearer \(token)"
            for (path, headers, status) in [
                ("/rooms/test/log?follow=maybe", [bearer], 400),
                ("/rooms/test/log?after=x&follow=true", [bearer], 400),
                ("/rooms/test/log?follow=true", [bearer, "Last-Event-ID: x"], 400),
                ("/rooms/test/log?after=9&follow=true", [bearer], 404),
                ("/rooms/test/log?follow=true", [bearer, "Last-Event-ID: 9"], 404),
                ("/rooms/nobody/log?follow=true", [bearer], 404),
                ("/rooms/test/log?follow=true", [], 401),
            ] {
                let response = try await HTTPGet(port: server.port, path: path, headers: headers)
                #expect(response.status == status, "\(path) \(headers)")
            }
            let message = try await HTTPGet(port: server.port, path: "/rooms/test/log?follow=yes", headers: [bearer])
            #expect(message.text.contains("follow must be true or false"))
            // follow=false is a recording as before.
            let recording = try await HTTPGet(port: server.port, path: "/rooms/test/log?follow=false", headers: [bearer])
            #expect(recording.status == 200 && recording.lines.count == 2)
        }
    }

    @Test func aQuietFollowerGetsAKeepAliveAsTheServersClockPasses() async throws {
        let clock = TestClock()
        try await withServer(clock: ServerClock(clock)) { server in
            // Following makes no room: a room no one has used is 404.
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test/log?follow=true").status == 404)
            let writer = try await Writer.connect(server.port)
            let events = try await FollowReader.open(
                port: server.port, path: "/rooms/test/log?follow=true", headers: ["Accept: text/event-stream"])
            defer { events.close() }
            let ndjson = try await FollowReader.open(port: server.port, path: "/rooms/test/log?follow=true")
            defer { ndjson.close() }
            _ = try await events.wait("the snapshot event") { $0.events.events.count == 1 }
            _ = try await ndjson.wait("the snapshot line") { $0.lines.count == 1 }
            #expect(events.now.events.comments == 0 && ndjson.now.emptyLines == 0, "nothing before the clock moves")

            // Each follower's keep-alive timer starts as it follows: the clock moves on until both have had one.
            try await within(60, "a keep-alive on each follower") {
                while events.now.events.comments == 0 || ndjson.now.emptyLines == 0 {
                    await clock.advance(by: RoomFollower.keepAliveInterval)
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(String(decoding: events.now.body, as: UTF8.self).contains("\n\n: keepalive\n\n"))
            // Readers skip them: the next change is the next line.
            try await writer.action(Self.increment)
            let after = try await ndjson.wait("the change after the keep-alive") { $0.lines.count == 2 }
            #expect(Self.versions(after.lines) == [0, 1])
            let event = try await events.wait("the event after the keep-alive") { $0.events.events.count == 2 }
            #expect(event.events.events.last?.id == "1")
        }
    }

    @Test func aFollowerThatDoesNotReadIsCutOffWhileAnotherGetsEverything() async throws {
        try await withServer(app: .json, configure: {
            $0.rateLimit = 0
            $0.queueLimitBytes = 128 << 10
        }) { server in
            let writer = try await Writer.connect(server.port)
            try await writer.action(#"{"type":"patch","ops":[{"op":"add","path":"/v","value":""}]}"#)
            let stalled = try await StalledSocket.open(port: server.port, path: "/rooms/test/log?after=1&follow=true")
            let reader = try await FollowReader.open(port: server.port, path: "/rooms/test/log?after=1&follow=true")
            defer { reader.close() }
            _ = try await reader.wait("the snapshot") { $0.lines.count == 1 }
            try await within(30, "both followers in the room") {
                while await server.followerCount(of: "test") < 2 { try await Task.sleep(for: .milliseconds(10)) }
            }

            // Far more than the queue limit, the socket buffers and a piece in the transport.
            let big = String(repeating: "x", count: 8_000)
            try await Self.send(300, prefix: "a", through: writer) { index in
                #"{"type":"patch","ops":[{"op":"replace","path":"/v","value":"\#(index)\#(big)"}]}"#
            }
            let all = try await reader.wait("every change") { $0.lines.last?["version"] == 301 }
            #expect(Self.versions(all.lines) == Array(1...301))
            try await within(30, "the follower that does not read to be cut off") {
                while await server.followerCount(of: "test") > 1 { try await Task.sleep(for: .milliseconds(10)) }
            }
            let (bytes, clean) = try await stalled.readToEnd()
            #expect(!clean, "a follower cut off gets no last chunk")
            #expect(bytes.count < 301 * 8_000)
            // The other one goes on.
            try await writer.action(#"{"type":"patch","ops":[{"op":"add","path":"/w","value":1}]}"#)
            #expect(try await reader.wait("one more") { $0.lines.last?["version"] == 302 }.closed == false)
        }
    }

    @Test func aDrainEndsEveryFollowStreamWithItsLastChunk() async throws {
        try await withServer(configure: { $0.rateLimit = 0 }) { server in
            let writer = try await Writer.connect(server.port)
            try await writer.action(Self.increment)
            let lines = try await FollowReader.open(port: server.port, path: "/rooms/test/log?after=0&follow=true")
            defer { lines.close() }
            let events = try await FollowReader.open(
                port: server.port, path: "/rooms/test/log?after=0&follow=true", headers: ["Accept: text/event-stream"])
            defer { events.close() }
            _ = try await lines.wait("the recording") { $0.lines.count == 2 }
            _ = try await events.wait("the recording") { $0.events.events.count == 2 }
            try await Self.send(20, Self.increment, prefix: "a", through: writer)

            await server.drain()
            let ended = try await lines.wait("the last chunk") { $0.ended }
            #expect(Self.versions(ended.lines) == Array(0...21))
            let endedEvents = try await events.wait("the last chunk") { $0.ended }
            #expect(endedEvents.events.events.map(\.id) == (0...21).map { "\($0)" })
            #expect(await server.followerCount(of: "test") == 0)
            // A draining server takes no new followers.
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test/log?follow=true").status == 503)
        }
    }

    @Test func aFollowerWithBobsTokenNeverSeesAlicesHand() async throws {
        try await PrivatePartsTests.withPrivateServer { server, aliceToken, bobToken in
            let alice = try await Writer.connect(server.port, session: "a", token: aliceToken)
            let bob = try await Writer.connect(server.port, session: "b", token: bobToken)
            let follower = try await FollowReader.open(
                port: server.port, path: "/rooms/test/log?after=0&follow=true",
                headers: ["Authorization: Bearer \(bobToken)"])
            defer { follower.close() }
            _ = try await follower.wait("the snapshot") { $0.lines.count == 1 }
            try await alice.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/hands","value":{}}]"#))
            try await alice.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/hands/alice","value":{"card":"SECRET-A"}}]"#))
            try await bob.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/hands/bob","value":{"card":"bob-card"}}]"#))
            try await alice.ask(PrivatePartsTests.patch(#"[{"op":"add","path":"/table","value":["public"]}]"#))
            try await alice.ask(PrivatePartsTests.patch(
                #"[{"op":"replace","path":"/hands/alice/card","value":"SECRET-A2"},{"op":"add","path":"/table/-","value":"x"}]"#))
            let refused = #"[{"op":"replace","path":"/hands","value":{"bob":{"card":"new"}}}]"#
            #expect(try await alice.ask(PrivatePartsTests.patch(refused))["code"] == "forbidden")

            let seen = try await follower.wait("the last change bob sees") { $0.lines.last?["version"] == 5 }
            #expect(!PrivatePartsTests.contains(seen.body, "SECRET-A"), "bob's follower received alice's hand")
            #expect(PrivatePartsTests.contains(seen.body, "bob-card"))
            // Exactly the patches bob's own connection received.
            _ = try await bob.client.next { if case .patch(5, _, _, _, _) = $0 { true } else { false } }
            let received = try await bob.client.frames.map { try JSON(parsing: $0) }.filter { $0["type"] == "patch" }
            #expect(Array(seen.lines.dropFirst()) == received)
            #expect(Self.versions(seen.lines) == [0, 1, 3, 4, 5])

            // Alice's follower sees her hand.
            let alices = try await FollowReader.open(
                port: server.port, path: "/rooms/test/log?after=0&follow=true",
                headers: ["Authorization: Bearer \(aliceToken)"])
            defer { alices.close() }
            let hers = try await alices.wait("alice's recording") { $0.lines.last?["version"] == 5 }
            #expect(PrivatePartsTests.contains(hers.body, "SECRET-A2"))
            #expect(!PrivatePartsTests.contains(hers.body, "bob-card"))
        }
    }

    @Test func aFollowerKeepsItsRoomInMemoryUntilItGoes() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        try await withStoredServer(in: directory, clock: ServerClock(clock), configure: { $0.roomIdle = .seconds(60) }) {
            server in
            let writer = try await Writer.connect(server.port)
            try await writer.action(Self.increment)
            let follower = try await FollowReader.open(port: server.port, path: "/rooms/test/log?follow=true")
            _ = try await follower.wait("the recording") { $0.lines.count == 2 }
            writer.close()
            try await waitForMetric("lockstep_connections", toReachAtMost: 0, port: server.port)
            // Past the idle limit many times over, a follower keeps the room.
            for _ in 1...3 { await clock.advance(by: .seconds(61)) }
            _ = try await follower.wait("a keep-alive") { $0.emptyLines > 0 }
            #expect(try await metric("lockstep_evictions_total", port: server.port) == 0)
            #expect(try await metric("lockstep_rooms", port: server.port) == 1)

            // Gone: the server notices at its next write, a keep-alive, and the room's idle clock starts.
            follower.close()
            try await within(60, "the server to notice the follower went away") {
                while await server.followerCount(of: "test") > 0 {
                    await clock.advance(by: RoomFollower.keepAliveInterval)
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            try await within(60, "the room to leave memory") {
                while try await metric("lockstep_evictions_total", port: server.port) == 0 {
                    await clock.advance(by: .seconds(60))
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(try await metric("lockstep_rooms", port: server.port) == 0)
        }
    }
}

extension SyncServer {
    /// How many followers `room` has now (0 when it is not in memory).
    func followerCount(of room: String) -> Int {
        rooms[room]?.followers.count ?? 0
    }
}

/// A follower that sends its request and never reads: a tiny receive window, so what the server writes piles up on
/// its side.
struct StalledSocket: Sendable {
    let fd: Int32

    static func open(port: Int, path: String) async throws -> StalledSocket {
        try await offThePool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw RawSocketError.failed("socket") }
            var size: Int32 = 1_024
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            do {
                try RawSocket.connect(fd, port: port)
                try RawSocket.write(fd, Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            } catch {
                Glibc.close(fd)
                throw error
            }
            return StalledSocket(fd: fd)
        }
    }

    /// Reads what the server sent until it closed, then closes; whether the response ended with its last chunk.
    func readToEnd() async throws -> (bytes: [UInt8], clean: Bool) {
        try await offThePool {
            defer { Glibc.close(fd) }
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count <= 0 { break }
                bytes += buffer[0..<count]
            }
            return (bytes, bytes.suffix(5).elementsEqual(Array("0\r\n\r\n".utf8)))
        }
    }
}
