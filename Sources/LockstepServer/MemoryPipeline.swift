import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Rooms in memory only (`--memory`): a change is applied and sent at once, and nothing is stored, so rooms stay in
/// memory and a restart starts them over.
final class MemoryPipeline: CommitPipeline {
    var isAvailable: Bool { true }
    var evictsIdleRooms: Bool { false }
    var isSettled: Bool { true }

    func commit(
        _ patch: Room.LoggedPatch, message: [UInt8], record: ChangeRecord, in room: Room, server: isolated SyncServer
    ) {
        server.broadcast(patch, in: room)
    }

    func markMoved(_ mark: StoredMark, in room: Room, server: isolated SyncServer) {
        room.marks.stored(mark)
    }

    func reply(_ answer: RequestAnswer, to requester: any Requester, server: isolated SyncServer) {
        requester.answer(answer)
    }

    func evict(_ room: Room, server: isolated SyncServer) {}

    func timersChanged(scheduled: [StoredTimer], gone: [TimerKey], in room: Room, server: isolated SyncServer) {}

    func pendingTimers(dueBy due: Int, server: isolated SyncServer) async -> [StoredTimer]? { nil }

    func pendingTimers(in room: String, server: isolated SyncServer) async -> [StoredTimer]? { nil }

    func read(
        room: String, creating: Bool, server: isolated SyncServer
    ) async -> Result<StoredRoomImage, StorageError> {
        .success(.none)
    }

    func storedChanges(
        room: String, after version: Int, through last: Int, limit: Int, server: isolated SyncServer
    ) async throws(StorageError) -> [StoredChange] {
        []
    }

    func oldestStoredChange(room: String, server: isolated SyncServer) async -> Int? { nil }
}
