import Clocks
import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTransport
import Testing
import LockstepTestSupport

/// Readers that keep up with a durable room are never mistaken for slow ones.
@Suite(.timeLimit(.minutes(2))) struct GroupCommitTests {
    /// A group commit releases many patches at once, far more than the queue limit: readers that drain them get no
    /// snapshot; only the one that stopped reading is resynchronised.
    @Test func readersThatKeepUpGetNoSnapshotWhenAGroupCommitReleasesMany() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TestClock()
        try await withStoredServer(
            in: directory, app: .json, clock: ServerClock(clock),
            configure: { $0.queueLimitBytes = 65_536; $0.rateLimit = 0 }
        ) { server in
            let stalled = try await TestClient.connect(server, using: sharedTransport)
            _ = try await stalled.next { $0.isSnapshot }
            stalled.socket.setReceiving(false)
            var writers: [TestClient] = []
            for _ in 0..<3 { writers.append(try await TestClient.connect(server, using: sharedTransport)) }
            // Incompressible, so a client that negotiated permessage-deflate falls as far behind as a plain one.
            var random = SplitMix64(seed: 4_000)
            let padding = JSON.string(random.incompressibleText(count: 4_000))
            let perWriter = 800
            for (number, writer) in writers.enumerated() {
                for index in 1...perWriter {
                    let value: JSON = ["writer": .int(number), "n": .int(index), "padding": padding]
                    let op: JSON = ["op": "add", "path": .string("/w\(number)"), "value": value]
                    writer.send(.action(id: "w\(number)-\(index)", action: ["type": "patch", "ops": [op]]))
                }
            }
            let total = 3 * perWriter
            for writer in writers {
                try await writer.catchUp(to: total, timeout: .seconds(60))
                let snapshots = await writer.snapshots
                #expect(snapshots == 1, "a reader that keeps up was resynchronised")
                #expect(await writer.gaps.isEmpty)
            }

            let last = total + (try await writers[0].trickleUntilAQueueIsDropped(on: server, clock: clock))
            try await writers[0].catchUp(to: last)

            stalled.socket.setReceiving(true)
            try await stalled.catchUp(to: last, timeout: .seconds(30))
            #expect(await stalled.snapshots >= 2, "the reader that stopped should have been resynchronised")
            #expect(await stalled.gaps.isEmpty)
            let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/test").json)
            #expect(await stalled.state == room["state"])
            #expect(await writers[0].state == room["state"])
        }
    }
}
