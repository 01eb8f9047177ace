import ArgumentParser
@testable import LockstepCommand
import LockstepLoad
import LockstepTransport
import Testing

/// `lockstep load` is a thin command over `LockstepLoad`: its options must reach the plan unchanged, its defaults
/// must be the plan's, and a plan the generator refuses must still be a usage error naming the option.
@Suite struct GenerateLoadTests {
    /// The command states its defaults for `--help`; they must be the plan's.
    @Test func theDefaultsAreThePlans() throws {
        let plan = try GenerateLoad.parse([]).plan
        let defaults = LoadPlan()
        #expect(plan.urls == defaults.urls)
        #expect(
            [plan.clients, plan.writers, plan.deflate, plan.window, plan.batch, plan.threads, plan.processes]
                == [defaults.clients, defaults.writers, defaults.deflate, defaults.window, defaults.batch,
                    defaults.threads, defaults.processes])
        #expect((plan.rate, plan.app, plan.scenario) == (defaults.rate, defaults.app, defaults.scenario))
        #expect(
            [plan.duration, plan.drain, plan.openTimeout, plan.collectInterval]
                == [defaults.duration, defaults.drain, defaults.openTimeout, defaults.collectInterval])
        #expect(plan.eventLoop == defaults.eventLoop && plan.sourceAddresses == defaults.sourceAddresses)
        #expect(plan.trustedCertificatesFile == nil && plan.serverPID == nil)
        #expect((plan.layout.paths, plan.layout.roomClients) == (defaults.layout.paths, defaults.layout.roomClients))
        #expect(plan.layout.privatePart == nil && !plan.layout.ownWrites && plan.layout.mintTokens == nil)
    }

    @Test func everyOptionReachesThePlan() throws {
        let command = try GenerateLoad.parse([
            "--url", "ws://127.0.0.1:9/rooms/a", "--url", "ws://127.0.0.2:10/rooms/a", "--clients", "50",
            "--writers", "3", "--deflate", "5", "--rate", "250.5", "--duration", "1.5s", "--app", "json",
            "--scenario", "burst", "--window", "8", "--batch", "10", "--open-timeout", "500ms", "--threads", "3",
            "--event-loop", "epoll", "--collect-interval", "0", "--drain", "2m", "--ca-file", "/tmp/ca.pem",
            "--server-pid", "42", "--source-addresses", "4", "--paths", "4", "--room-clients", "2",
        ])
        let plan = command.plan
        #expect(plan.urls == ["ws://127.0.0.1:9/rooms/a", "ws://127.0.0.2:10/rooms/a"])
        #expect((plan.clients, plan.writers, plan.deflate, plan.window, plan.batch) == (50, 3, 5, 8, 10))
        #expect((plan.rate, plan.app, plan.scenario, plan.threads) == (250.5, "json", .burst, 3))
        #expect(plan.duration == .milliseconds(1500) && plan.drain == .seconds(120))
        #expect(plan.openTimeout == .milliseconds(500) && plan.collectInterval == .zero)
        #expect(plan.eventLoop == .epoll && plan.trustedCertificatesFile == "/tmp/ca.pem" && plan.serverPID == 42)
        #expect(plan.sourceAddresses == 4)
        #expect((plan.layout.paths, plan.layout.roomClients) == (4, 2))
        try plan.validate()
    }

    /// A worker is this executable with the coordinator's arguments and its index.
    @Test func workersGetTheSameArgumentsAndTheirIndex() throws {
        let plan = try GenerateLoad.parse(["--processes", "2"]).plan
        let arguments = try #require(plan.workerArguments?(1))
        #expect(arguments.suffix(2) == ["--worker", "1"])
        #expect(try GenerateLoad.parse(["--processes", "2", "--worker", "1"]).worker == 1)
    }

    /// A secret gives every client a token; without one, none is minted.
    @Test func aSecretMintsTokens() async throws {
        let secret = String(repeating: "s", count: 32)
        let plan = try GenerateLoad.parse([
            "--app", "json", "--private-part", "/hands/{sub}", "--own-writes", "--auth-secret", secret,
        ]).plan
        #expect(plan.layout.privatePart == "/hands/{sub}" && plan.layout.ownWrites)
        let tokens = try #require(try await plan.layout.mintTokens?(["c0", "c1"]))
        #expect(tokens.count == 2 && tokens[0] != tokens[1])
    }

    @Test(arguments: [
        (["--clients", "0"], "--clients must be positive"),
        (["--writers", "2", "--clients", "1"], "--writers must be 1...--clients"),
        (["--rate", "0"], "--rate must be a positive number"),
        (["--app", "chess"], "unknown --app 'chess'; choose counter, json or todos"),
        (
            ["--url", "ws://10.0.0.1:80/rooms/a"],
            "--url must point at a loopback address (127.x.x.x, localhost, [::1]), not '10.0.0.1'"
        ),
        (["--room-clients", "2"], "--room-clients needs --paths"),
        (
            ["--app", "json", "--private-part", "/hands/{sub}"],
            "--private-part needs --auth-secret-file (the server's secret) to mint tokens"
        ),
        (["--paths", "2"], "--paths and --private-part need --app json"),
        (
            ["--processes", "2", "--paths", "2", "--app", "json"],
            "--processes works with whole-room runs only (no --paths or --private-part)"
        ),
        (["--processes", "2", "--worker", "2"], "--worker must be 0..<--processes"),
    ])
    func aRefusedPlanIsAUsageError(arguments: [String], message: String) {
        do {
            _ = try GenerateLoad.parse(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(GenerateLoad.message(for: error) == message)
            #expect(GenerateLoad.exitCode(for: error) == .validationFailure)
        }
    }
}
