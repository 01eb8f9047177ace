import LockstepCore
import LockstepJSON
import LockstepServer
import Testing

/// A reducer with effects: `double` sends a follow-up action at once, `later` runs async work.
private struct Echo: Reducer {
    struct State: Codable, Equatable, Sendable {
        var log: [String] = []
    }

    enum Action: Codable, Equatable, Sendable {
        case say(String)
        case double(String)
        case later(String)
    }

    var initialState: State { State() }

    func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
        switch action {
        case .say(let word):
            state.log.append(word)
            return .none
        case .double(let word):
            state.log.append(word)
            return .send(.say(word + " again"))
        case .later(let word):
            return .run { send in
                // The effect's async work; the tests wait for the action it sends, not for this.
                try? await Task.sleep(for: .milliseconds(20))
                await send(.say(word + " later"))
            }
        }
    }
}

@Suite(.timeLimit(.minutes(1))) struct EffectTests {
    private let app = App("echo", summary: "says things", reducer: Echo())

    @Test func aSendEffectIsAppliedRightAfterItsAction() async throws {
        try await withServer(app: app) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            client.send(.action(id: "d", action: ["double": ["_0": "hi"]]))
            let first = try await client.next { $0.isPatch(version: 1) }
            let second = try await client.next { $0.isPatch(version: 2) }
            guard case .patch(_, _, let cause, _, _) = first, case .patch(_, _, let effectCause, _, _) = second else {
                return
            }
            #expect(cause.kind == .action)
            #expect(effectCause.untimed == Cause(kind: .effect, action: ["say": ["_0": "hi again"]]))
            try await client.catchUp(to: 2)
            #expect(await client.state == ["log": ["hi", "hi again"]])
        }
    }

    @Test func aRunEffectFeedsItsActionsBackThroughTheRoom() async throws {
        try await withServer(app: app) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            client.send(.action(id: "l", action: ["later": ["_0": "bye"]]))
            #expect(try await client.next { $0.isAck } == .ack(id: "l", version: 0))
            let patch = try await client.next()
            guard case .patch(_, _, let cause, _, _) = patch else { return }
            #expect(cause.untimed == Cause(kind: .effect, action: ["say": ["_0": "bye later"]]))
            // An effect's change is undone like any other.
            client.send(.undo(id: "u"))
            try await client.catchUp(to: 2)
            #expect(await client.state == ["log": []])
        }
    }
}
