import Foundation
import LockstepJSON
import LockstepTestSupport
import Testing

/// `lockstep load` against a real `lockstep serve`: its counts must match what the server did, for every app, so
/// the figures the performance record relies on are right.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct LoadToolTests {
    /// Runs `lockstep load --json` with `arguments` and returns its report and exit status; with `descriptorLimit`,
    /// under that `RLIMIT_NOFILE` (soft and hard, through `prlimit`).
    private func load(_ arguments: [String], descriptorLimit: Int? = nil) async throws -> (report: JSON, status: Int32) {
        let command = [try builtExecutable("lockstep"), "load", "--json"] + arguments
        let child =
            if let descriptorLimit {
                try ChildProcess(executable: "/usr/bin/prlimit", arguments: ["--nofile=\(descriptorLimit)", "--"] + command)
            } else {
                try ChildProcess(executable: command[0], arguments: Array(command.dropFirst()))
            }
        let output = try await offThePool { child.readToEnd() }
        return (try JSON(parsing: output), try await offThePool { child.waitForExit() })
    }

    @Test(arguments: ["counter", "json", "todos"])
    func fanoutCountsEveryDeliveryAndItsLatency(app: String) async throws {
        let server = try await ServerProcess.start(arguments: ["--app", app, "--memory", "--rate-limit", "0"])
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

    /// `--scenario http`: four writers post over keep-alive connections of their own, one request at a time, while
    /// five clients read; every request is acked, every reader gets every patch in order, and the room's version is
    /// the number of acks.
    @Test(arguments: ["counter", "json"])
    func httpWritersPostAndEveryReaderSeesEachPatch(app: String) async throws {
        let server = try await ServerProcess.start(arguments: ["--app", app, "--memory", "--rate-limit", "0"])
        defer { server.terminate() }
        let (report, status) = try await load([
            "--url", "ws://127.0.0.1:\(server.port)/rooms/posted", "--app", app, "--scenario", "http",
            "--clients", "5", "--writers", "4", "--duration", "1s",
        ])
        #expect(status == 0)
        #expect(report["passed"] == true)
        let acked = try #require(report["acked"]?.intValue)
        #expect(acked > 0)
        #expect(report["sent"]?.intValue == acked)
        #expect(report["errors"] == 0)
        #expect(report["gaps"] == 0)
        #expect(report["missing"] == 0)
        #expect(report["deliveries"]?.intValue == acked * 5, "every reader saw every posted change")
        #expect(report["requestLatencyMs"]?["count"]?.intValue == acked, "every request timed")
        // The request ids reach the patches' causes, so the readers time each delivery from its request's send.
        #expect(report["latencyMs"]?["count"]?.intValue == acked * 5)
        #expect((report["actionsPerSecond"]?.doubleValue ?? 0) > 0)
        let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/posted").json)
        #expect(room["version"]?.intValue == acked)
    }

    /// `--scenario presence`: four writers move a cursor 100 times a second each for a second; the server merges the
    /// moves per `--presence-interval`, so every client gets far fewer messages than moves, and the room's state never
    /// changes.
    @Test func presenceWritersMoveCursorsThatTheServerMerges() async throws {
        let server = try await ServerProcess.start(arguments: [
            "--app", "json", "--memory", "--rate-limit", "0", "--presence-interval", "100ms",
        ])
        defer { server.terminate() }
        let (report, status) = try await load([
            "--url", "ws://127.0.0.1:\(server.port)/rooms/cursors", "--app", "json", "--scenario", "presence",
            "--clients", "5", "--writers", "4", "--rate", "400", "--duration", "1s",
        ])
        #expect(status == 0)
        #expect(report["passed"] == true)
        let sent = try #require(report["sent"]?.intValue)
        #expect(sent >= 300, "about 400 moves in one second")
        #expect(report["acked"] == 0 && report["errors"] == 0)
        let messages = try #require(report["deliveries"]?.intValue)
        // At most one merged message per interval per client (about 10 in the second, plus the run's end).
        #expect(messages > 0 && messages <= 5 * 20, "\(messages) presence messages for \(sent) moves")
        #expect((report["receivedBytes"]?.intValue ?? 0) > 0)
        let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/cursors").json)
        #expect(room["version"] == 0, "presence is never part of the room")
    }

    /// `--scenario http` on a server that requires tokens: each HTTP writer posts with a write token of its own.
    @Test func httpWritersCarryTheirOwnTokens() async throws {
        let secretFile = FileManager.default.temporaryDirectory.appending(path: "load-secret-\(UUID().uuidString)")
        try Data(AccessTests.secret).write(to: secretFile)
        defer { try? FileManager.default.removeItem(at: secretFile) }
        let server = try await ServerProcess.start(arguments: [
            "--app", "counter", "--memory", "--rate-limit", "0", "--auth-secret-file", secretFile.path,
        ])
        defer { server.terminate() }
        let (report, status) = try await load([
            "--url", "ws://127.0.0.1:\(server.port)/rooms/tokens", "--scenario", "http", "--clients", "2",
            "--writers", "2", "--duration", "1s", "--auth-secret-file", secretFile.path,
        ])
        #expect(status == 0)
        #expect(report["passed"] == true)
        #expect((report["acked"]?.intValue ?? 0) > 0)
        #expect(report["errors"] == 0)
        #expect(report["firstError"] == nil)
    }

    /// `--paths`: four clients over two views and two on the whole room; each action reaches its view's two
    /// clients and both whole-room clients, and the skipped versions count as neither gaps nor missing.
    @Test func viewsCountOnlyThePatchesOfTheirPath() async throws {
        let server = try await ServerProcess.start(arguments: ["--app", "json", "--memory", "--rate-limit", "0"])
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
        let server = try await ServerProcess.start(arguments: [
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

    /// `--processes 2 --source-addresses 2`: 2 000 clients, opened by two generator processes that may hold 1 500
    /// descriptors each (so one could not hold them all), from 127.0.0.2 and 127.0.0.3 (the server allows 1 000
    /// connections per address, so one address could not either); one report counts every delivery of both, in order.
    /// On both of the generator's event loops.
    @Test(arguments: ["poll", "epoll"])
    func twoProcessesFromTwoSourceAddressesReportAsOne(eventLoop: String) async throws {
        let server = try await ServerProcess.start(arguments: [
            "--app", "counter", "--memory", "--rate-limit", "0", "--max-connections-per-ip", "1000",
        ])
        defer { server.terminate() }
        let clients = 2_000
        let (report, status) = try await load(
            [
                "--url", "ws://127.0.0.1:\(server.port)/rooms/spread", "--clients", "\(clients)", "--writers", "2",
                "--rate", "50", "--duration", "2s", "--processes", "2", "--source-addresses", "2", "--threads", "1",
                "--event-loop", eventLoop,
            ], descriptorLimit: 1_500)
        #expect(status == 0)
        #expect(report["passed"] == true)
        #expect(report["connected"]?.intValue == clients)
        #expect(report["connectFailures"] == 0)
        let sent = try #require(report["sent"]?.intValue)
        #expect(sent >= 80, "about 100 actions in two seconds")
        #expect(report["acked"]?.intValue == sent)
        #expect(report["deliveries"]?.intValue == sent * clients, "every client of both processes saw every patch")
        #expect(report["latencyMs"]?["count"]?.intValue == sent * clients)
        #expect(report["gaps"] == 0)
        #expect(report["missing"] == 0)
        let room = try #require(try await HTTPGet(port: server.port, path: "/rooms/spread").json)
        #expect(room["version"]?.intValue == sent)
    }
}
