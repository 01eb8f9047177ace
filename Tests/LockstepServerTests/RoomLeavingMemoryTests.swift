import LockstepApps
import LockstepCore
@testable import LockstepServer
import LockstepTestSupport
import Testing

/// What a room leaves behind on a server of a cluster once it is out of memory.
@Suite(.timeLimit(.minutes(5)), .serialized, .postgresExclusive) struct RoomLeavingMemoryTests {
    /// A room dropped with clients in it (its copy could not be trusted) sends them away; the app's action for each
    /// leave then comes for a room no longer in memory. The pipeline keeps nothing for it: a state kept by the room's
    /// identity would outlive the room, and a later room at the same address would be handed it.
    @Test func aRoomDroppedWithItsClientsLeavesNoStateBehind() async throws {
        let app = App("counter", summary: "a shared number", reducer: Counter(), left: { _ in .increment })
        try await withCluster(nodes: 1, app: app) { _, servers in
            let server = servers[0]
            let alice = try await TestClient.connect(server, room: "dropped", using: sharedTransport)
            _ = try await alice.nextJSON(type: "snapshot")
            #expect(await server.sharedRoomStates() == 1)

            await server.dropRoom(named: "dropped")
            #expect(await server.sharedRoomStates() == 0)
            _ = try await alice.nextJSON(type: "error")
        }
    }
}

extension SyncServer {
    /// Drops the room as the pipeline does when its copy cannot be trusted.
    fileprivate func dropRoom(named name: String) {
        guard let room = rooms[name] else { return }
        let notice = ServerMessage.error(id: nil, code: "unavailable", message: "the room must be read again")
        drop(room, telling: notice, reason: "room reloading")
    }

    /// How many rooms the shared log's pipeline keeps a state for.
    fileprivate func sharedRoomStates() -> Int? {
        (pipeline as? SharedLogPipeline)?.states.count
    }
}
