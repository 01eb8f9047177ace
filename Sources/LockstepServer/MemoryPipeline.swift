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
        _ patch: Room.LoggedPatch, message: [UInt8], record: ChangeRecord, in room: Room, server: isolated some RoomHost
    ) {
        server.handle(.committed(patch, room))
    }

    func markMoved(_ mark: StoredMark, in room: Room, server: isolated some RoomHost) {
        room.engine.marks.stored(mark)
    }

    func reply(_ answer: RequestAnswer, to requester: any Requester, server: isolated some RoomHost) {
        requester.answer(answer)
    }

    func evict(_ room: Room, server: isolated some RoomHost) {}

    func timersChanged(scheduled: [StoredTimer], gone: [TimerKey], in room: Room, server: isolated some RoomHost) {}

    func pendingTimers(dueBy due: Int, server: isolated some RoomHost) async -> [StoredTimer]? { nil }

    func pendingTimers(in room: String, server: isolated some RoomHost) async -> [StoredTimer]? { nil }

    func read(
        room: String, creating: Bool, server: isolated some RoomHost
    ) async -> Result<StoredRoomImage, StorageError> {
        .success(.none)
    }

    func storedChanges(
        room: String, after version: Int, through last: Int, limit: Int, server: isolated some RoomHost
    ) async throws(StorageError) -> [StoredChange] {
        []
    }

    func oldestStoredChange(room: String, server: isolated some RoomHost) async -> Int? { nil }
}
