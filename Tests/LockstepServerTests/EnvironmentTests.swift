import Foundation
import Glibc
import LockstepJSON
import LockstepTestSupport
import Testing

/// `lockstep serve` configured from environment variables (`LOCKSTEP_PORT`, ...) and writing JSON log lines: the
/// real executable, its real output.
@Suite(.timeLimit(.minutes(2))) struct EnvironmentTests {
    @Test func variablesSetOptionsAndFlagsWinOverThem() async throws {
        let port = try PostgresServer.freePort()
        let fromEnvironment = try await Launched.serve(
            [], environment: ["LOCKSTEP_PORT": "\(port)", "LOCKSTEP_APP": "todos", "LOCKSTEP_MEMORY": "yes"])
        #expect(fromEnvironment.announcement.contains("serving 'todos' rooms on ws://127.0.0.1:\(port)/"))
        #expect(await fromEnvironment.stop() == 0)

        let flagsWin = try await Launched.serve(
            ["--port", "0", "--app", "counter"], environment: ["LOCKSTEP_PORT": "\(port)", "LOCKSTEP_APP": "todos"])
        #expect(flagsWin.announcement.contains("serving 'counter' rooms"))
        #expect(!flagsWin.announcement.contains(":\(port)/"))
        #expect(await flagsWin.stop() == 0)
    }

    /// A repeatable option takes a comma-separated list: both origins are allowed, a third is not.
    @Test func aRepeatableOptionTakesAList() async throws {
        let server = try await Launched.serve(
            ["--port", "0", "--memory"],
            environment: ["LOCKSTEP_ALLOWED_ORIGIN": "https://a.example,https://b.example"])
        let port = server.port
        let statuses = try await offThePool { () throws -> [Int] in
            try ["https://b.example", "https://c.example"].map { origin in
                var socket = try RawWebSocket(port: port, path: "/rooms/origins", headers: ["Origin: \(origin)"])
                defer { socket.close() }
                return try socket.status()
            }
        }
        #expect(statuses == [101, 403])
        #expect(await server.stop() == 0)
    }

    /// A value the option refuses fails as the flag would, and the error says it came from the environment.
    @Test func badValuesNameTheirVariable() async throws {
        let port = try await Launched.run(["serve"], environment: ["LOCKSTEP_PORT": "eighty"])
        #expect(port.status == 64)
        #expect(port.output.contains("LOCKSTEP_PORT"))
        let flag = try await Launched.run(["serve"], environment: ["LOCKSTEP_MEMORY": "perhaps"])
        #expect(flag.status == 64)
        #expect(flag.output.contains("LOCKSTEP_MEMORY=perhaps is not a switch"))
    }

    /// Every option `lockstep serve --help` lists has its variable in docs/deploy.md, and a subcommand other than
    /// `serve` does not read them (its options are its own).
    @Test func everyServeOptionHasADocumentedVariable() async throws {
        let help = try await Launched.run(["serve", "--help"], environment: [:])
        let options = Set(help.output.matches(of: /--([a-z][a-z-]+)/).map { String($0.output.1) })
            .subtracting(["help", "version"])
            // A flag's `--no-` form is its own variable set to false.
            .filter { !$0.hasPrefix("no-") }
        #expect(options.count > 30)
        let deploy = try String(contentsOfFile: repositoryRoot() + "/docs/deploy.md", encoding: .utf8)
        for option in options.sorted() {
            let variable = "LOCKSTEP_" + option.uppercased().replacing("-", with: "_")
            #expect(deploy.contains("`\(variable)`"), "docs/deploy.md does not document \(variable)")
        }
        let token = try await Launched.run(
            ["token", "--help"], environment: ["LOCKSTEP_PORT": "eighty", "LOCKSTEP_MEMORY": "perhaps"])
        #expect(token.status == 0)
    }

    /// `--log-format json` (here from `LOCKSTEP_LOG_FORMAT`): each line on stderr is one JSON object, from start to
    /// the drain's end.
    @Test func jsonLogLinesParseAsJSON() async throws {
        let server = try await Launched.serve(
            ["--port", "0", "--memory", "--log-level", "debug"], environment: ["LOCKSTEP_LOG_FORMAT": "json"])
        let client = try await TestClient.connect(port: server.port, room: "logs", using: sharedTransport)
        _ = try await client.nextJSON(type: "snapshot")
        client.close()
        // The server has seen the client leave before it is told to stop.
        try await waitForMetric("lockstep_connections", toReachAtMost: 0, port: server.port)
        #expect(await server.stop() == 0)
        let lines = (server.before + server.rest()).split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix("lockstep: serving") }
        #expect(lines.count >= 4)
        var messages: [String] = []
        for line in lines {
            let json = try? JSON(parsing: Array(line.utf8))
            let fields = json.map { [$0["level"], $0["time"], $0["message"]].allSatisfy { $0?.stringValue != nil } }
            #expect(fields == true, "not a JSON log line: \(line)")
            if let message = json?["message"]?.stringValue { messages.append(message) }
        }
        #expect(messages.contains("listening"))
        #expect(messages.contains("connection opened"))
        #expect(messages.contains("drained"))
        let listening = lines.compactMap { try? JSON(parsing: Array($0.utf8)) }.first {
            $0["message"]?.stringValue == "listening"
        }
        #expect(listening?["port"]?.stringValue == "\(server.port)")
    }

    private func repositoryRoot() -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }
}
