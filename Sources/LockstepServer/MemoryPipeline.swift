import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Rooms in memory only (`--memory`): a change is applied and sent at once, and nothing is stored, so rooms stay in
/// memory and a restart starts them over.
final class MemoryPipeline: CommitPipeline {
    var isAvailable: Bool { true }
    var evictsIdleRooms: Bool { false }

    func clientID(_ number: Int) -> String { "c\(number)" }

    func start(server: isolated SyncServer) {}

    func submit(_ input: RoomInput, to room: Room, server: isolated SyncServer) {
        server.apply(input, in: room)
    }

    func commit(
        _ patch: Room.LoggedPatch, message: [UInt8], inverse: JSONPatch, in room: Room, server: isolated SyncServer
    ) {
        server.broadcast(patch, in: room)
    }

    func markMoved(_ mark: StoredMark, in room: Room, server: isolated SyncServer) {
        room.marks.stored(mark.session, upTo: mark.seq)
    }

    func reply(_ frame: OutboundFrame, to session: Session, server: isolated SyncServer) {
        session.reply(frame)
    }

    func isIdle(_ room: Room) -> Bool { true }

    func evict(_ room: Room, server: isolated SyncServer) {}

    func forget(_ room: Room) {}

    func peersChanged(in room: Room, server: isolated SyncServer) {}

    func remotePeers(of room: Room) -> [Peer] { [] }

    func read(room: String, creating: Bool, server: isolated SyncServer) async -> Result<StoredRoomImage, StorageError> {
        .success(.none)
    }

    func installed(_ room: Room, server: isolated SyncServer) {}

    func prepareJoin(of room: Room, session: String?, server: isolated SyncServer) async -> Bool { true }

    func storedChanges(
        room: String, after version: Int, through last: Int, limit: Int, server: isolated SyncServer
    ) async throws(StorageError) -> [StoredChange] {
        []
    }

    func oldestStoredChange(room: String, server: isolated SyncServer) async -> Int? { nil }

    func close() {}
}
