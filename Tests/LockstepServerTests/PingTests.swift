import LockstepApps
import LockstepJSON
import LockstepServer
import Testing

/// `--ping-interval`: a WebSocket client gone without a word (it reads nothing and answers no ping) is closed once
/// the interval and its grace have passed, and leaves presence; a client that answers pings stays.
@Suite(.timeLimit(.minutes(2))) struct PingTests {
    @Test func aClientThatAnswersNoPingIsClosedAndLeavesPresence() async throws {
        try await withServer(app: .counter, configure: { $0.pingInterval = .seconds(1) }) { server in
            let alice = try await Writer.connect(server.port, room: "ping")
            var ghost = try RawWebSocket(port: server.port, path: "/rooms/ping")
            defer { ghost.close() }
            #expect(try ghost.status() == 101)

            // Alice hears the ghost join, then, after about 11 s, leave.
            var sawGhost = false
            while true {
                let presence = try await alice.client.nextJSON(type: "presence")
                guard let count = presence["peers"]?.arrayValue?.count else { continue }
                if count == 2 { sawGhost = true }
                if sawGhost, count == 1 { break }
            }

            // Alice answered every ping: she is still there, and her requests are answered.
            #expect(try await alice.action(#"{"type":"increment"}"#)["type"] == "ack")
        }
    }
}
