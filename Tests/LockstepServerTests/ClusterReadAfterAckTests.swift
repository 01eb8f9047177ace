import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// What a client may rely on right after an ack on a cluster: every server reads that change, and a database that came
/// back is used at once.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct ClusterReadAfterAckTests {
    @Test func everyServerReadsAVersionRightAfterItsAckThroughAnother() async throws {
        try await withCluster(nodes: 3) { _, servers in
            // Clients on B and C keep the room in their memory, where it may lag behind A's commits.
            var followers: [TestClient] = []
            for server in servers.dropFirst() {
                let follower = try await TestClient.connect(server, room: "r", using: sharedTransport)
                _ = try await follower.nextJSON(type: "snapshot")
                followers.append(follower)
            }
            let writer = try await TestClient.connect(servers[0], room: "r", using: sharedTransport)
            _ = try await writer.nextJSON(type: "snapshot")
            for n in 1...30 {
                writer.sendRaw(#"{"type":"action","id":"\#(n)","action":{"type":"increment"}}"#)
                let version = try #require(try await writer.nextJSON(type: "ack")["version"]?.intValue)
                let reader = servers[1 + n % 2]
                let past = try await HTTPGet(port: reader.port, path: "/rooms/r?version=\(version)")
                #expect(past.status == 200, "version \(version) on server \(1 + n % 2): \(past.text)")
                #expect(past.json?["state"] == ["count": .int(version)])
                let current = try await HTTPGet(port: reader.port, path: "/rooms/r").json
                #expect((current?["version"]?.intValue ?? 0) >= version)
                let log = try await HTTPGet(port: servers[2 - n % 2].port, path: "/rooms/r/log?after=\(version - 1)")
                #expect(log.status == 200, "log after \(version - 1): \(log.text)")
                #expect(log.text.split(separator: "\n").count == 2)
            }
            _ = followers
        }
    }

    @Test func theFirstRequestOnceTheDatabaseIsBackIsApplied() async throws {
        try await withCluster(nodes: 1, operationTimeout: .seconds(8)) { postgres, servers in
            let server = servers[0]
            let client = try await TestClient.connect(server, room: "d", query: "session=s", using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            client.sendRaw(#"{"type":"action","id":"a1","seq":1,"action":{"type":"increment"}}"#)
            #expect(try await client.nextJSON(type: "ack")["version"] == 1)

            postgres.halt()
            var answer: JSON = .null
            for attempt in 2...40 where answer["code"] != "unavailable" {
                client.sendRaw(
                    #"{"type":"action","id":"a\#(attempt)","seq":\#(attempt),"action":{"type":"increment"}}"#)
                answer = try await client.nextJSON(timeout: .seconds(30))
            }
            #expect(answer["code"] == "unavailable")
            // Long enough down for the server's probe to back off to its longest pause.
            try await Task.sleep(for: .seconds(4))
            try postgres.start()
            client.sendRaw(#"{"type":"action","id":"b","seq":100,"action":{"type":"increment"}}"#)
            var first = try await client.nextJSON(timeout: .seconds(30))
            while first["type"] == "patch" || first["type"] == "presence" {
                first = try await client.nextJSON(timeout: .seconds(30))
            }
            #expect(first["type"] == "ack", "the first request after the database came back: \(first)")
            #expect(first["version"] == 2)
        }
    }
}
