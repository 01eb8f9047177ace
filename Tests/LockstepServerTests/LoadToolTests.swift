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

    /// `--paths`: four clients over two views and two on the whole room; each action reaches its view's two
    /// clients and both whole-room clients, and the skipped versions count as neither gaps nor missing.
    @Test func viewsCountOnlyThePatchesOfTheirPath() async throws {
        let server = try ServerProcess(arguments: ["--app", "json", "--memory", "--rate-limit", "0"])
        defer { server.terminate() }
        let (report, status) = try await load([
            "--url", "ws://127.0.0.1:\(server.port)/rooms/views", "--app", "json", "--paths", "2",
            "--room-clients", "2", "--clients", "6", "--writers", "1", "--rate", "100", "--duration", "1s",
        ])
        #expect(status == 0)
        #expect(report["passed"] == true)
        let sent = try #require(report["sent"]?.intValue)
        #expect(sent >= 75, "about 100 actions in one second")
        #expect(report["acked"]?.intValue == sent)
        #expect(report["deliveries"]?.intValue == sent * 4, "two view clients and two whole-room clients each")
        #expect(report["gaps"] == 0)
        #expect(report["missing"] == 0)
        let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/views").json)
        #expect(room["version"]?.intValue == sent + 1, "the setup created /p0 and /p1 in one change")
        #expect(room["state"]?["p0"]?["n"] != nil)
        #expect(room["state"]?["p1"]?["n"] != nil)
    }

    /// `--private-part --own-writes`: with a token per client, every client creates its own subtree, and a change
    /// inside the writer's reaches the writer alone; the others' skipped versions are not missing.
    @Test func ownPrivateChangesReachOnlyTheirOwner() async throws {
        let secretFile = FileManager.default.temporaryDirectory.appending(path: "load-secret-\(UUID().uuidString)")
        try Data(AccessTests.secret).write(to: secretFile)
        defer { try? FileManager.default.removeItem(at: secretFile) }
        let server = try ServerProcess(arguments: [
            "--app", "json", "--memory", "--rate-limit", "0", "--auth-secret-file", secretFile.path,
            "--private", "/hands/{sub}",
        ])
        defer { server.terminate() }
        let (report, status) = try await load([
            "--url", "ws://127.0.0.1:\(server.port)/rooms/own", "--app", "json", "--clients", "5", "--writers", "1",
            "--rate", "100", "--duration", "1s", "--private-part", "/hands/{sub}", "--own-writes",
            "--auth-secret-file", secretFile.path,
        ])
        #expect(status == 0)
        #expect(report["passed"] == true)
        let sent = try #require(report["sent"]?.intValue)
        #expect(sent >= 75, "about 100 actions in one second")
        #expect(report["acked"]?.intValue == sent)
        #expect(report["deliveries"]?.intValue == sent, "only the writer sees its own subtree change")
        #expect(report["missing"] == 0)
        #expect(report["errors"] == 0)
    }
}
