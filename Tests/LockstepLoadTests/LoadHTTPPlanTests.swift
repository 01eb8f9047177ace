@testable import LockstepLoad
import Testing

/// `--scenario http`: where its writers post, and the plans it refuses, each naming the option at fault.
@Suite struct LoadHTTPPlanTests {
    @Test func aRoomURLBecomesItsPostTarget() throws {
        let target = try #require(LoadHTTPTarget(url: "ws://127.0.0.1:8080/rooms/bench?name=w"))
        #expect(target.host == "127.0.0.1" && target.port == 8080)
        #expect(target.path == "/rooms/bench?name=w" && target.hostHeader == "127.0.0.1:8080")
        let ipv6 = try #require(LoadHTTPTarget(url: "ws://[::1]:9/rooms/a"))
        #expect((ipv6.host, ipv6.port, ipv6.path, ipv6.hostHeader) == ("::1", 9, "/rooms/a", "[::1]:9"))
        let noPort = try #require(LoadHTTPTarget(url: "ws://localhost/rooms/a"))
        #expect((noPort.host, noPort.port) == ("localhost", 80))
        #expect(LoadHTTPTarget(url: "wss://127.0.0.1:8443/rooms/a") == nil, "the writers speak plain HTTP")
        #expect(LoadHTTPTarget(url: "ws://127.0.0.1:0/rooms/a") == nil)
        #expect(LoadHTTPTarget(url: "ws://:80/rooms/a") == nil)
    }

    private func refusal(_ change: (inout LoadPlan) -> Void) -> String? {
        var plan = LoadPlan()
        plan.scenario = .http
        plan.clients = 2
        change(&plan)
        do {
            try plan.validate()
            return nil
        } catch {
            return error.description
        }
    }

    @Test func httpWritersAreBesidesTheClients() {
        #expect(refusal { $0.writers = 8 } == nil, "more writers than clients: the clients only read")
        #expect(refusal { $0.writers = 0 } == "--writers must be positive")
        #expect(refusal { $0.requestTimeout = .zero } == "--request-timeout must be positive")
    }

    @Test func httpRunsInOneProcessOnTheWholeRoomOverPlainHTTP() {
        #expect(
            refusal {
                $0.processes = 2
                $0.workerArguments = { _ in [] }
            } == "--scenario http runs in one process (no --processes)")
        #expect(
            refusal {
                $0.app = "json"
                $0.layout.paths = 2
            } == "--scenario http works with whole-room runs only (no --paths or --private-part)")
        #expect(refusal { $0.urls = ["wss://127.0.0.1:8443/rooms/a"] }?.hasPrefix("--scenario http posts") == true)
    }
}
