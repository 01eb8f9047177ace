import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import Testing
import LockstepTestSupport

/// `GET /rooms/ROOM?version=V` and `GET /rooms/ROOM/log?after=V`: PROTOCOL 1.1 "Time travel" and "Recordings".
@Suite(.timeLimit(.minutes(2))) struct RecordingTests {
    let transport = sharedTransport

    /// A todos room with `count` changes made by one client; returns the client and the state of every version.
    private func todosRoom(_ server: SyncServer, changes count: Int) async throws -> (TestClient, [JSON]) {
        let client = try await TestClient.connect(server, using: transport)
        var states = [try await client.nextSnapshotState()]
        for index in 1...count {
            let action: JSON =
                index % 3 == 0 ? ["type": "toggle", "id": .int(index / 3)] : ["type": "add", "title": .string("t\(index)")]
            client.send(.action(id: "a\(index)", action: action))
            try await client.catchUp(to: index)
            states.append(await client.state)
        }
        return (client, states)
    }

    @Test func aPastVersionIsItsState() async throws {
        try await withServer(app: .todos) { server in
            let (client, states) = try await todosRoom(server, changes: 6)
            client.send(.undo(id: "u"))
            try await client.catchUp(to: 7)
            for version in [0, 3, 6, 7] {
                let response = try await HTTPGet(port: server.port, path: "/rooms/test?version=\(version)")
                #expect(response.status == 200)
                let expected = version == 7 ? states[5] : states[version]
                #expect(response.json == ["room": "test", "version": .int(version), "state": expected])
            }
            for path in ["/rooms/test?version=8", "/rooms/test?version=-1", "/rooms/never?version=0"] {
                #expect(try await HTTPGet(port: server.port, path: path).status == 404, "\(path)")
            }
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test?version=abc").status == 400)
        }
    }

    @Test func aVersionPastWhatTheServerKeepsIs404() async throws {
        try await withServer(app: .todos, configure: { $0.resumeWindow = 2 }) { server in
            _ = try await todosRoom(server, changes: 6)
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test?version=4").status == 200)
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test?version=3").status == 404)
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test/log?after=3").status == 404)
            let log = try await HTTPGet(port: server.port, path: "/rooms/test/log")
            #expect(log.lines.first?["version"] == 4)
            #expect(log.lines.count == 3)
        }
    }

    @Test func theLogIsTheSnapshotThenThePatchesByteForByte() async throws {
        try await withServer(app: .todos) { server in
            let (client, states) = try await todosRoom(server, changes: 9)
            client.send(.revert(id: "t", to: 4))
            client.send(.undo(id: "u"))
            try await client.catchUp(to: 11)

            let response = try await HTTPGet(port: server.port, path: "/rooms/test/log?after=4")
            #expect(response.status == 200)
            #expect(response.head.contains("content-type: application/x-ndjson"))
            let lines = response.body.split(separator: 10).map(Array.init)
            #expect(lines.count == 8)
            let first = try JSON(parsing: lines[0])
            let epoch = try #require(first["epoch"])
            #expect(first == ["type": "snapshot", "room": "test", "version": 4, "state": states[4], "epoch": epoch, "stateVersion": 1])

            // What the client received for versions 5 to 11, as the server sent it.
            let received = await client.frames.filter { frame in
                guard let message = try? ServerMessage(json: JSON(parsing: frame)), case .patch(let version, _, _, _, _) = message
                else { return false }
                return version > 4
            }
            #expect(Array(lines.dropFirst()) == received)

            var state = try #require(try JSON(parsing: lines[0])["state"])
            for line in lines.dropFirst() {
                guard case .patch(_, let ops, _, _, _) = try ServerMessage(json: JSON(parsing: line)) else { continue }
                try ops.apply(to: &state)
            }
            #expect(state == (await client.state))
        }
    }

    @Test func theLogWithoutAfterStartsAtTheOldestVersionAndAnUnusedRoomIs404() async throws {
        try await withServer { server in
            #expect(try await HTTPGet(port: server.port, path: "/rooms/nobody/log").status == 404)
            let client = try await TestClient.connect(server, using: transport)
            _ = try await client.nextSnapshotState()
            let empty = try await HTTPGet(port: server.port, path: "/rooms/test/log")
            #expect(empty.status == 200)
            let epoch = try #require(empty.lines.first?["epoch"])
            #expect(empty.lines == [["type": "snapshot", "room": "test", "version": 0, "state": ["count": 0], "epoch": epoch, "stateVersion": 1]])

            client.send(.action(id: "a", action: ["type": "increment"]))
            try await client.catchUp(to: 1)
            let log = try await HTTPGet(port: server.port, path: "/rooms/test/log")
            #expect(log.lines.count == 2)
            #expect(log.lines.first?["version"] == 0)
            for path in ["/rooms/test/log?after=2", "/rooms/test/log?after=-1"] {
                #expect(try await HTTPGet(port: server.port, path: path).status == 404, "\(path)")
            }
            #expect(try await HTTPGet(port: server.port, path: "/rooms/test/log?after=x").status == 400)
        }
    }

    @Test func aLongLogStreamsInPieces() async throws {
        try await withServer(configure: {
            $0.resumeWindow = 5_000
            $0.rateLimit = 0
        }) { server in
            let client = try await TestClient.connect(server, using: transport)
            _ = try await client.nextSnapshotState()
            for index in 1...1_000 { client.send(.action(id: "a\(index)", action: ["type": "add", "amount": 1])) }
            try await client.catchUp(to: 1_000)
            let response = try await HTTPGet(port: server.port, path: "/rooms/test/log?after=0")
            #expect(response.head.contains("transfer-encoding: chunked"))
            #expect(response.body.count > RecordingStream.pieceBytes)
            let lines = response.lines
            #expect(lines.count == 1_001)
            #expect(lines.last?["version"] == 1_000)
        }
    }

    @Test func readingAPastVersionNeedsTheSameTokenAsTheRoom() async throws {
        let tokens = try await TokenAuthority(secret: AccessTests.secret)
        try await withServer(configure: { $0.tokens = tokens }) { server in
            let writer = try await tokens.issue(room: "test", role: .write, lifetime: .seconds(60))
            let client = try await TestClient.connect(server, query: "token=\(writer)", using: transport)
            _ = try await client.nextSnapshotState()
            for path in ["/rooms/test?version=0", "/rooms/test/log"] {
                #expect(try await HTTPGet(port: server.port, path: path).status == 401)
                let other = try await tokens.issue(room: "other", role: .read, lifetime: .seconds(60))
                #expect(try await HTTPGet(port: server.port, path: path, headers: ["Authorization: Bearer \(other)"]).status == 403)
                let reader = try await tokens.issue(room: "test", role: .read, lifetime: .seconds(60))
                #expect(try await HTTPGet(port: server.port, path: path, headers: ["Authorization: Bearer \(reader)"]).status == 200)
            }
        }
    }
}
