import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Time travel beyond memory: the stored changes a `revert` or a past version's read needs, read before the room's
/// engine rebuilds the state backwards from the current one (``RoomEngine/state(at:older:)``).
extension SyncServer {
    /// A revert further back than memory holds: the stored changes it needs are read first, while a client's later
    /// requests wait unread, so it is still applied in its turn.
    func revertFromStorage(_ request: ClientRequest, from requester: any Requester, to version: Int) {
        let room = requester.room
        let connection = (requester as? Session)?.connection
        connection?.pauseReceiving()
        requestsBeingRead += 1
        Task {
            let older = await self.storedHistory(of: room, from: version)
            defer { self.requestsBeingRead -= 1 }
            if let connection {
                self.resumeReceiving(connection)
                guard connection.context as? Session === requester else { return }
            }
            self.pipeline.submit(.request(request, requester, older: older), to: room, server: self)
        }
    }

    /// The stored changes after `version` up to what memory holds, oldest first; as far back as storage has them.
    private func storedHistory(of room: Room, from version: Int) async -> [StoredChange] {
        let held = room.engine.timeline.oldestVersion ?? room.engine.store.version + 1
        var changes: [StoredChange] = []
        var after = version
        while after < held - 1 {
            let page = try? await pipeline.storedChanges(
                room: room.name, after: after, through: held - 1, limit: Self.rebuildPage, server: self)
            guard let page, let last = page.last, page.first?.version == after + 1 else { break }
            changes += page
            after = last.version
        }
        return changes
    }

    /// The oldest version of `room` whose state can be rebuilt: from the inverse patches in memory, or further back
    /// from those in storage.
    func oldestVersion(of room: Room) async -> Int {
        let held = room.engine.timeline.oldestVersion ?? room.engine.store.version + 1
        guard let stored = await pipeline.oldestStoredChange(room: room.name, server: self), stored < held else {
            return held - 1
        }
        return stored - 1
    }

    /// The state of a past version of `room` for an HTTP read, reading storage beyond memory.
    func pastState(of room: Room, at version: Int) async throws(TimeTravelError) -> JSON {
        let older = room.engine.needsStoredHistory(toReach: version) ? await storedHistory(of: room, from: version) : []
        do {
            return try room.engine.state(at: version, older: older)
        } catch .unknownVersion(let version, _) {
            throw .unknownVersion(version, oldest: await oldestVersion(of: room))
        }
    }

    /// Changes read from storage at once while rebuilding.
    static let rebuildPage = 1_000
}
