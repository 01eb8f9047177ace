import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepTestSupport
import Testing

/// A follower on one server of a PostgreSQL cluster gets every change, whichever server made it, contiguously.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct FollowClusterTests {
    @Test func aFollowerOnServerASeesTheChangesMadeThroughServerBContiguously() async throws {
        try await withCluster(nodes: 2, configure: { $0.rateLimit = 0 }) { _, servers in
            // The room is made and changed through B only: A reads it from the database for its follower.
            let b = try await Writer.connect(servers[1].port)
            for _ in 1...3 { try await b.action(FollowTests.increment) }
            let follower = try await FollowReader.open(
                port: servers[0].port, path: "/rooms/test/log?after=1&follow=true")
            defer { follower.close() }
            let events = try await FollowReader.open(
                port: servers[0].port, path: "/rooms/test/log?follow=true",
                headers: ["Accept: text/event-stream", "Last-Event-ID: 2"])
            defer { events.close() }
            let start = try await follower.wait("the recording on A", seconds: 60) { $0.lines.count == 3 }
            #expect(FollowTests.versions(start.lines) == [1, 2, 3])
            _ = try await events.wait("the events on A", seconds: 60) { $0.events.events.count == 2 }
            #expect(await servers[0].followerCount(of: "test") == 2)

            // Writers on both servers at once.
            let a = try await Writer.connect(servers[0].port)
            async let throughA: Void = FollowTests.send(40, FollowTests.increment, prefix: "a", through: a)
            async let throughB: Void = FollowTests.send(40, #"{"type":"add","amount":2}"#, prefix: "b", through: b)
            _ = try await (throughA, throughB)
            let all = try await follower.wait("every change on A", seconds: 60) { $0.lines.last?["version"] == 83 }
            #expect(FollowTests.versions(all.lines) == Array(1...83))
            #expect(try FollowTests.state(of: all.lines) == ["count": 123])
            let stored = try await HTTPGet(port: servers[1].port, path: "/rooms/test")
            #expect(stored.json?["state"] == ["count": 123])
            let seen = try await events.wait("every event on A", seconds: 60) { $0.events.events.last?.id == "83" }
            #expect(seen.events.events.map(\.id) == (2...83).map { "\($0)" })

            // B's followers see A's changes the same way.
            let onB = try await FollowReader.open(port: servers[1].port, path: "/rooms/test/log?after=80&follow=true")
            defer { onB.close() }
            try await a.action(FollowTests.increment)
            let fromA = try await onB.wait("A's change on B", seconds: 60) { $0.lines.last?["version"] == 84 }
            #expect(FollowTests.versions(fromA.lines) == [80, 81, 82, 83, 84])
            _ = try await follower.wait("A's change on A", seconds: 60) { $0.lines.last?["version"] == 84 }
        }
    }
}
