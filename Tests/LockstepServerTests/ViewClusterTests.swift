import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// A view on one server of a PostgreSQL cluster gets exactly its part of the changes made through another.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct ViewClusterTests {
    @Test func aViewOnServerBSeesItsPartOfWhatServerAChanged() async throws {
        try await withCluster(nodes: 2, app: .json) { _, servers in
            let writer = try await Writer.connect(servers[0].port)
            try await writer.action(#"{"type":"patch","ops":[{"op":"add","path":"/a","value":{"n":0}}]}"#)
            let (view, snapshot) = try await ViewTests.view(servers[1].port, "/a")
            #expect(snapshot["state"] == ["n": 0])
            try await writer.action(#"{"type":"patch","ops":[{"op":"replace","path":"/a/n","value":1}]}"#)
            try await writer.action(#"{"type":"patch","ops":[{"op":"add","path":"/b","value":1}]}"#)
            try await writer.action(#"{"type":"patch","ops":[{"op":"replace","path":"/a","value":{"m":2}}]}"#)
            try await writer.ask(#"{"type":"undo"}"#)
            var seen: [JSON] = []
            for _ in 0..<50 where seen.count < 3 {
                seen = try await ViewTests.patches(of: view)
            }
            #expect(seen.map { $0["version"] } == [2, 4, 5])
            #expect(seen.map { $0["ops"] } == [
                [["op": "replace", "path": "/n", "value": 1]],
                [["op": "replace", "path": "", "value": ["m": 2]]],
                [["op": "replace", "path": "", "value": ["n": 1]]],
            ])
            #expect(await view.state == ["n": 1])
        }
    }
}
