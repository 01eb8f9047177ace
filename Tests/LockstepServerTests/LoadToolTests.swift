import Foundation
import LockstepJSON
import LockstepTestSupport
import Testing

/// `lockstep load` against a real `lockstep serve`: its counts must match what the server did, for every app, so
/// the figures the performance record relies on are right.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct LoadToolTests {
    /// Runs `lockstep load --json` with `arguments` and returns its report and exit status.
    private func load(_ arguments: [String]) async throws -> (report: JSON, status: Int32) {
        let child = try ChildProcess(
            executable: try builtExecutable("lockstep"), arguments: ["load", "--json"] + arguments)
        let output = try await offThePool { child.readToEnd() }
        return (try JSON(parsing: output), try await offThePool { child.waitForExit() })
    }

    @Test(arguments: ["counter", "json", "todos"])
    func fanoutCountsEveryDeliveryAndItsLatency(app: String) async throws {
        let server = try ServerProcess(arguments: ["--app", app, "--memory", "--rate-limit", "0"])
        defer { server.terminate() }
        let (report, status) = try await load([
            "--url", "ws://127.0.0.1:\(server.port)/rooms/load", "--app", app,
            "--clients", "20", "--writers", "2", "--rate", "200", "--duration", "1s",
        ])
        #expect(status == 0)
        #expect(report["passed"] == true)
        let sent = try #require(report["sent"]?.intValue)
        #expect(sent >= 150, "about 200 actions in one second")
        #expect(report["acked"]?.intValue == sent)
        #expect(report["deliveries"]?.intValue == sent * 20, "every client saw every patch")
        #expect(report["gaps"] == 0)
        #expect(report["missing"] == 0)
        // Every delivery carried one of the generator's ids, so every one has a latency.
        #expect(report["latencyMs"]?["count"]?.intValue == sent * 20)
        #expect((report["latencyMs"]?["p50"]?.doubleValue ?? 0) > 0)
        let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/load").json)
        #expect(room["version"]?.intValue == sent)
    }
}
