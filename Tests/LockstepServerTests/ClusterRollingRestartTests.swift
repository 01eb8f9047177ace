import Foundation
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepTestSupport
import Synchronization
import Testing

/// A rolling restart, as docs/deploy.md describes it: three `lockstep serve --postgres` nodes behind nginx, each in
/// turn sent SIGTERM and started again on its port, while SDK clients with sessions send 3 000 actions through the
/// proxy. Every action is applied exactly once, no client's mirror ever skips a version or resynchronises, and every
/// node exits 0 within its drain timeout.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct ClusterRollingRestartTests {
    static let clients = 6
    static let actionsPerClient = 500
    static let drainTimeout = Duration.seconds(5)

    /// Adds `key` to the room and appends it to `/log`: a request applied twice shows twice there.
    static func action(_ key: String) -> JSON {
        [
            "type": "patch",
            "ops": [
                ["op": "add", "path": .string("/\(key)"), "value": true],
                ["op": "add", "path": "/log/-", "value": .string(key)],
            ],
        ]
    }

    @Test func everyActionIsAppliedOnceWhileEachNodeIsRestartedInTurn() async throws {
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let arguments = [
            "--app", "json", "--postgres", postgres.url, "--rate-limit", "0", "--log-level", "critical",
            "--drain-timeout", "\(Self.drainTimeout.components.seconds)s",
        ]
        var nodes: [NodeProcess] = []
        defer { for node in nodes { node.stop() } }
        for _ in 0..<3 { nodes.append(try await NodeProcess.start(arguments: arguments)) }
        let proxy = try NginxProxy(upstreams: nodes.map(\.port))
        defer { proxy.stop() }
        let url = "ws://127.0.0.1:\(proxy.port)/rooms/rolling"

        let creator = try RoomClient(url: url, name: "creator")
        try await creator.connect()
        try await creator.send(action: ["type": "patch", "ops": [["op": "add", "path": "/log", "value": []]]])
        await creator.close()

        let acked = Tally()
        let started = nodes
        let restarts = Task { () -> [(status: Int32, took: Duration)?] in
            // Once the clients are under way, each node in turn: SIGTERM, wait for it to exit, start it again.
            while acked.value < 100 { try? await Task.sleep(for: .milliseconds(10)) }
            var stops: [(status: Int32, took: Duration)?] = []
            for node in started {
                stops.append(await node.terminate())
                try? await node.restart()
                // The rollout's pace: clients reconnect to the restarted node before the next one goes.
                try? await Task.sleep(for: .milliseconds(300))
            }
            return stops
        }

        let reports = try await withThrowingTaskGroup(of: ClientReport.self) { group in
            for index in 0..<Self.clients {
                group.addTask { try await Self.runClient(index, url: url, acked: acked) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let ackedInAll = acked.value
        let stops = await restarts.value
        print("rolling restart: node stops \(stops.map { $0.map { "exit \($0.status) in \($0.took)" } ?? "-" })")

        for (index, stop) in stops.enumerated() {
            #expect(stop?.status == 0, "node \(index) exited \(String(describing: stop?.status))")
            #expect((stop?.took ?? .seconds(999)) < Self.drainTimeout + DrainTests.exitSlack, "node \(index) drained too slowly")
        }
        #expect(ackedInAll == Self.clients * Self.actionsPerClient)
        for report in reports {
            #expect(report.failures.isEmpty, "client \(report.index): \(report.failures.prefix(3))")
            #expect(report.gaps.isEmpty, "client \(report.index) saw \(report.gaps.prefix(3))")
            #expect(report.resynchronisations == 0, "client \(report.index) resynchronised")
        }
        #expect(reports.contains { $0.reconnections > 0 }, "no client was moved by a restart")

        // The room, read from a node: every key once in /log, in one order, and nothing else.
        let room = try await HTTPGet(port: nodes[0].port, path: "/rooms/rolling")
        let log = room.json?["state"]?["log"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let expected = Set((0..<Self.clients).flatMap { client in
            (0..<Self.actionsPerClient).map { "k\(client)-\($0)" }
        })
        #expect(log.count == expected.count)
        #expect(Set(log) == expected)
    }

    /// What one client saw.
    struct ClientReport: Sendable {
        let index: Int
        var failures: [String] = []
        var gaps: [String] = []
        var resynchronisations = 0
        var reconnections = 0
    }

    /// Sends this client's actions one after the other, a few milliseconds apart, and watches its mirror: patches one
    /// version after the other, no resynchronisation.
    static func runClient(_ index: Int, url: String, acked: Tally) async throws -> ClientReport {
        let retry = ReconnectPolicy(initialDelay: .milliseconds(50), maxDelay: .seconds(1))
        let client = try RoomClient(url: url, name: "c\(index)", reconnect: retry)
        try await client.connect()
        let watcher = Task { () -> ClientReport in
            var report = ClientReport(index: index)
            var version: Int?
            for await update in client.updates {
                switch update.change {
                case .snapshot:
                    if version != nil { report.reconnections += 1 }
                    version = update.version
                case .resumed:
                    report.reconnections += 1
                    if let last = version, update.version != last { report.gaps.append("resumed at \(update.version)") }
                case .patch:
                    if let last = version, update.version != last + 1 {
                        report.gaps.append("\(last) -> \(update.version)")
                    }
                    version = update.version
                case .status(.resynchronising):
                    report.resynchronisations += 1
                default:
                    break
                }
            }
            return report
        }
        var failures: [String] = []
        for n in 0..<actionsPerClient {
            do {
                try await client.send(action: action("k\(index)-\(n)"))
                acked.add()
            } catch {
                failures.append("k\(index)-\(n): \(error)")
            }
            // The client's pace, so its writes span the whole rollout.
            try await Task.sleep(for: .milliseconds(5))
        }
        await client.close()
        var report = await watcher.value
        report.failures = failures
        return report
    }
}

/// A count several tasks add to and read.
final class Tally: Sendable {
    private let count = Atomic(0)
    var value: Int { count.load(ordering: .relaxed) }
    func add() { count.add(1, ordering: .relaxed) }
}
