import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// A lobby that lists who is in it: the app's own actions for joins and leaves keep the list, not the clients.
private struct Lobby: Reducer {
    struct State: Codable, Equatable, Sendable {
        var present: [String] = []
    }

    enum Action: Codable, Equatable, Sendable {
        case arrive(String)
        case depart(String)
    }

    var initialState: State { State() }

    func reduce(into state: inout State, action: Action) throws(Rejection) -> Effect<Action> {
        switch action {
        case .arrive(let name): state.present.append(name)
        case .depart(let name): state.present.removeAll { $0 == name }
        }
        return .none
    }
}

/// An app that opts in to joins and leaves gets its actions applied as the client's changes, with their own kinds.
@Suite(.timeLimit(.minutes(2))) struct MembershipTests {
    private let app = App(
        "lobby", summary: "who is here", reducer: Lobby(), joined: { .arrive($0.name ?? $0.client) },
        left: { .depart($0.name ?? $0.client) })

    @Test func joinsAndLeavesAreTheAppsActionsLoggedAndUndoable() async throws {
        try await withServer(app: app) { server in
            let alice = try await TestClient.connect(server, query: "name=alice", using: sharedTransport)
            _ = try await alice.nextJSON(type: "snapshot")
            let joined = try await alice.nextJSON(type: "patch")
            #expect(joined["cause"]?["kind"] == "join")
            #expect(joined["cause"]?["name"] == "alice")
            let bob = try await TestClient.connect(server, query: "name=bob", using: sharedTransport)
            _ = try await bob.nextJSON(type: "snapshot")
            #expect(try await bob.nextJSON(type: "patch")["cause"]?["kind"] == "join")
            alice.close()
            let left = try await bob.nextJSON(type: "patch")
            #expect(left["cause"]?["kind"] == "leave")
            #expect(left["cause"]?["client"] == "c1")
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"] == ["present": ["bob"]])
            bob.sendRaw(#"{"type":"undo","id":"u"}"#)
            _ = try await bob.nextJSON(type: "ack")
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test").json?["state"] == ["present": ["alice", "bob"]])
            let log = try await HTTPGet(port: server.port, path: "/rooms/test/log?after=0").lines
            #expect(log.compactMap { $0["cause"]?["kind"]?.stringValue } == ["join", "join", "leave", "undo"])
        }
    }

    @Test func anAppWithoutMembershipChangesNothingOnJoin() async throws {
        try await withServer(app: .counter) { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            _ = try await client.nextJSON(type: "snapshot")
            client.close()
            let other = try await TestClient.connect(server, using: sharedTransport)
            #expect(try await other.nextJSON(type: "snapshot")["version"] == 0)
        }
    }
}
