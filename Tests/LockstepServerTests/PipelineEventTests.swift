import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import Testing

/// What a pipeline reports, carried out by a real server: a room storage can no longer vouch for leaves memory only if
/// it is still the copy there, since a copy read again since holds what is stored.
@Suite(.timeLimit(.minutes(1))) struct PipelineEventTests {
    static let notice = ServerMessage.error(id: nil, code: "unavailable", message: "reconnect to resume")

    @Test func aLostRoomLeavesMemoryOnlyWhileItIsTheCopyThere() async throws {
        try await withServer { server in
            let client = try await TestClient.connect(server, room: "r", using: sharedTransport)
            client.send(.action(id: "a", action: ["type": "increment"]))
            _ = try await client.next { $0 == .ack(id: "a", version: 1) }

            #expect(await Self.loseAnOlderCopy(of: "r", on: server))
            client.send(.action(id: "b", action: ["type": "increment"]))
            _ = try await client.next { $0 == .ack(id: "b", version: 2) }

            #expect(await Self.loseTheCopyInMemory(of: "r", on: server))
            _ = try await client.next { $0 == Self.notice }
            #expect(await client.closeCode() == 1011)
        }
    }

    /// Reports a copy of `name` that is not the one in memory lost; true when the room in memory stayed.
    private static func loseAnOlderCopy(of name: String, on server: isolated SyncServer) -> Bool {
        let current = server.rooms[name]
        let older = Room(
            name: name, store: App.counter.makeStore(undoDepth: 1), stream: server.makeStream(), resumeWindow: 1)
        server.handle(.roomLost(older, notice: notice, reason: "an older copy"))
        return current != nil && server.rooms[name] === current
    }

    /// Reports the copy of `name` in memory lost; true when it left memory.
    private static func loseTheCopyInMemory(of name: String, on server: isolated SyncServer) -> Bool {
        guard let current = server.rooms[name] else { return false }
        server.handle(.roomLost(current, notice: notice, reason: "storage failure"))
        return server.rooms[name] == nil
    }
}
