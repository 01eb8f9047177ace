import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTransport
import Testing

@Suite(.timeLimit(.minutes(2))) struct ResumeTests {
    let transport = sharedTransport

    /// A room at version `count`, driven by one client that then leaves.
    private func drive(_ server: SyncServer, to count: Int) async throws {
        let driver = try await TestClient.connect(server, using: transport)
        for index in 1...count { driver.send(.action(id: "a\(index)", action: ["type": "increment"])) }
        try await driver.catchUp(to: count)
        driver.close()
    }

    @Test func resumingGetsResumeThenTheMissedPatches() async throws {
        try await withServer { server in
            try await drive(server, to: 7)
            let client = try await TestClient.connect(server, query: "since=4", using: transport)
            #expect(try await client.next() == .resume(room: "test", you: "c2", version: 4))
            for version in 5...7 { #expect(try await client.next().isPatch(version: version)) }
        }
    }

    @Test func resumingAtTheCurrentVersionGetsResumeAlone() async throws {
        try await withServer { server in
            try await drive(server, to: 3)
            let client = try await TestClient.connect(server, query: "since=3", using: transport)
            #expect(try await client.next() == .resume(room: "test", you: "c2", version: 3))
            // Nothing but presence follows (the driver's leave may or may not be in the first one).
            while true {
                let message = try await client.next()
                guard case .presence(let peers) = message else {
                    Issue.record("expected only presence after the resume, got \(message)")
                    break
                }
                if peers == [Peer(client: "c2", name: "c2")] { break }
            }
        }
    }

    @Test(arguments: ["since=9", "since=abc", "since=-1", "since=1"])
    func aVersionTheServerCannotResumeFromGetsASnapshot(query: String) async throws {
        try await withServer(configure: { $0.resumeWindow = 2 }) { server in
            try await drive(server, to: 5)
            let client = try await TestClient.connect(server, query: query, using: transport)
            #expect(
                try await client.next()
                    == .snapshot(room: "test", you: "c2", version: 5, state: ["count": 5], undo: 5, redo: 0))
        }
    }

    @Test func theResumeWindowKeepsTheLastPatches() async throws {
        try await withServer(configure: { $0.resumeWindow = 2 }) { server in
            try await drive(server, to: 5)
            let client = try await TestClient.connect(server, query: "since=3", using: transport)
            #expect(try await client.next() == .resume(room: "test", you: "c2", version: 3))
            #expect(try await client.next().isPatch(version: 4))
            #expect(try await client.next().isPatch(version: 5))
        }
    }
}
