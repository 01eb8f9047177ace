import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// `POST /rooms/ROOM` on several servers: the request joins the room's one order, and an `Idempotency-Key` is
/// applied once whichever server gets it.
@Suite(.timeLimit(.minutes(5)), .serialized, .postgresExclusive) struct ClusterHTTPRequestTests {
    @Test func aKeyUsedThroughEveryServerIsAppliedOnce() async throws {
        try await withCluster(nodes: 3) { _, servers in
            let watcher = try await TestClient.connect(servers[2], room: "pay", using: sharedTransport)
            _ = try await watcher.nextJSON(type: "snapshot")
            let body = #"{"type":"action","id":"p","action":{"type":"add","amount":5}}"#
            let key = ["Idempotency-Key: order-7"]
            let first = try await HTTPGet.post(port: servers[0].port, path: "/rooms/pay", json: body, headers: key)
            #expect(first.json == ["room": "pay", "version": 1])
            for server in servers {
                let again = try await HTTPGet.post(port: server.port, path: "/rooms/pay", json: body, headers: key)
                #expect(again.json == ["room": "pay", "version": 1, "duplicate": true], "\(again.text)")
            }
            let mismatch = try await HTTPGet.post(
                port: servers[1].port, path: "/rooms/pay", json: #"{"type":"action","action":{"type":"increment"}}"#,
                headers: key)
            #expect(mismatch.json?["code"] == "idempotency_mismatch")
            let patch = try await watcher.nextJSON(type: "patch")
            #expect(patch["version"] == 1)
            #expect(patch["cause"]?["client"] == "http")
            for server in servers {
                #expect(try await HTTPGet(port: server.port, path: "/rooms/pay").json?["state"] == ["count": 5])
            }
        }
    }

    @Test func concurrentPostsOnEveryServerGetDistinctVersions() async throws {
        try await withCluster(nodes: 3) { _, servers in
            let body = #"{"type":"action","action":{"type":"increment"}}"#
            let versions = try await withThrowingTaskGroup(of: Int?.self) { group in
                for n in 0..<30 {
                    let port = servers[n % 3].port
                    group.addTask {
                        try await HTTPGet.post(port: port, path: "/rooms/race", json: body).json?["version"]?.intValue
                    }
                }
                return try await group.reduce(into: [Int]()) { if let version = $1 { $0.append(version) } }
            }
            #expect(versions.sorted() == Array(1...30))
            #expect(try await HTTPGet(port: servers[1].port, path: "/rooms/race").json?["state"] == ["count": 30])
        }
    }
}
