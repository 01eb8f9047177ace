import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import Testing
import LockstepTestSupport

@Suite(.timeLimit(.minutes(1))) struct HTTPTests {
    @Test func healthzAnswersOK() async throws {
        try await withServer { server in
            let response = try await HTTPGet(port: server.port, path: "/healthz")
            #expect(response.status == 200)
            #expect(response.text == "ok")
        }
    }

    @Test func aRoomIsItsVersionAndState() async throws {
        try await withServer(app: .todos) { server in
            #expect(try await HTTPGet(port: server.port, path: "/rooms/never").status == 404)
            let client = try await TestClient.connect(server, room: "list", using: sharedTransport)
            client.send(.action(id: "a", action: ["type": "add", "title": "tea"]))
            try await client.catchUp(to: 1)
            let response = try await HTTPGet(port: server.port, path: "/rooms/list")
            #expect(response.status == 200)
            let epoch = try #require(response.json?["epoch"])
            #expect(
                response.json == [
                    "room": "list", "version": 1,
                    "state": ["items": [["id": 1, "title": "tea", "done": false]], "nextId": 2], "epoch": epoch,
                ])
        }
    }

    @Test func metricsAreInPrometheusTextFormat() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, using: sharedTransport)
            client.send(.action(id: "a", action: ["type": "increment"]))
            client.send(.undo(id: "u"))
            client.send(.undo(id: "u2"))
            _ = try await client.next {
                $0 == .error(id: "u2", code: "nothing_to_undo", message: "there is nothing to undo")
            }
            let text = try await HTTPGet(port: server.port, path: "/metrics").text
            for line in [
                "lockstep_connections 1", "lockstep_rooms 1", "lockstep_actions_total 1", "lockstep_patches_total 2",
                #"lockstep_errors_total{code="nothing_to_undo"} 1"#, "lockstep_action_latency_seconds_count 3",
            ] {
                #expect(text.contains(line), "missing \(line)")
            }
        }
    }

    @Test func unknownPathsAre404() async throws {
        try await withServer { server in
            let unknown = try await HTTPGet(port: server.port, path: "/nope")
            let badRoom = try await HTTPGet(port: server.port, path: "/rooms/bad%20name")
            #expect(unknown.status == 404)
            #expect(badRoom.status == 404)
        }
    }
}
