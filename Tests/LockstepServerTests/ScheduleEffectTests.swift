import Clocks
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// A reducer whose turn times out: `move` schedules `timeout` as the room's timer, `cancel` takes it away.
private struct Turns: Reducer {
    struct State: Codable, Equatable, Sendable {
        var moves = 0
        var timeouts = 0
    }

    enum Action: Codable, Equatable, Sendable {
        case move
        case timeout
        case stop
    }

    var initialState: State { State() }

    func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
        switch action {
        case .move:
            state.moves += 1
            return .schedule(.timeout, after: .seconds(30), timer: "turn")
        case .timeout:
            state.timeouts += 1
            return .none
        case .stop:
            return .cancel(timer: "turn")
        }
    }
}

/// `Effect.schedule` and `Effect.cancel`: a reducer's delays are the room's timers, on the server's clock.
@Suite(.timeLimit(.minutes(1))) struct ScheduleEffectTests {
    private let app = App("turns", summary: "turns that time out", reducer: Turns())

    @Test func aScheduledEffectFiresAsTheSendersTimerAndAMoveReplacesIt() async throws {
        let clock = TestClock()
        try await withServer(app: app, clock: ServerClock(clock, startingAt: 5_000), configure: { $0.presenceInterval = .zero }) {
            server in
            let client = try await TestClient.connect(server, query: "name=alice", using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            client.sendRaw(#"{"type":"action","id":"m1","action":{"move":{}}}"#)
            _ = try await client.nextJSON(type: "ack")
            try await waitForATimer(on: clock)
            await clock.advance(by: .seconds(20))
            // A second move replaces the pending timeout: it is due 30 s after this move.
            client.sendRaw(#"{"type":"action","id":"m2","action":{"move":{}}}"#)
            _ = try await client.nextJSON(type: "ack")
            let listed = try await HTTPGet(port: server.port, path: "/rooms/test/timers").json
            #expect(listed?["timers"]?[0]?["due"] == .int(5_000 + 50_000))
            // A room no one used has no timers to list, as it has no state to read.
            #expect(try await HTTPGet(port: server.port, path: "/rooms/never-used/timers").status == 404)
            #expect(listed?["timers"]?.arrayValue?.count == 1)
            await clock.advance(by: .seconds(30))
            let patch = try await client.nextJSON(type: "patch")
            #expect(patch["cause"]?["kind"] == "timer")
            #expect(patch["cause"]?["timer"] == "turn")
            #expect(patch["cause"]?["name"] == "alice")
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"] == ["moves": 2, "timeouts": 1])
        }
    }

    @Test func aCancelEffectTakesTheTimerAway() async throws {
        try await withServer(app: app) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            client.sendRaw(#"{"type":"action","action":{"move":{}}}"#)
            _ = try await client.nextJSON(type: "ack")
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test/timers").json?["timers"]?.arrayValue?.count == 1)
            client.sendRaw(#"{"type":"action","action":{"stop":{}}}"#)
            _ = try await client.nextJSON(type: "ack")
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test/timers").json?["timers"] == [])
        }
    }
}
