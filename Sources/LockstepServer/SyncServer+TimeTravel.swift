import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Time travel: `revert` and the state of a past version, rebuilt backwards from the current state.
extension SyncServer {
    /// Puts the room back to the state of `version` as one new change, or acknowledges a no-op when that state is the
    /// current one. The reducer does not run and no effect starts. `older` holds the stored changes beyond memory that
    /// the rebuild needs.
    func revert(to version: Int, id: String?, seq: Int?, from requester: any Requester, older: [StoredChange]) {
        let room = requester.room
        do throws(TimeTravelError) {
            let context = context(for: requester, in: room)
            let performed = try RoomTurn.revert(
                to: version, id: id, client: requester.client, on: &room.store, timeline: room.timeline, older: older,
                context: context)
            if let change = performed.change, let cause = performed.cause {
                publish(change, in: room, cause: cause, context: context)
            }
            finish(seq: seq, with: .ack(id: id, version: room.store.version), for: requester)
        } catch {
            finish(seq: nil, with: .error(id: id, code: error.code, message: error.message), for: requester)
        }
    }

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
        let held = room.timeline.oldestVersion ?? room.store.version + 1
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
        let held = room.timeline.oldestVersion ?? room.store.version + 1
        guard let stored = await pipeline.oldestStoredChange(room: room.name, server: self), stored < held else {
            return held - 1
        }
        return stored - 1
    }

    /// The state `room` had at `version`, rebuilt by its timeline from memory and then from `older` (stored changes
    /// read beforehand).
    func state(of room: Room, at version: Int, older: [StoredChange]) throws(TimeTravelError) -> JSON {
        let current = try RoomTurn.state(of: room.store)
        return try room.timeline.state(at: version, from: current, current: room.store.version, older: older)
    }

    /// The newest version of `room` its clients have received, and its state: the store's less the changes still
    /// being stored, so that a read never shows what a crash could take back.
    func releasedState(of room: Room) throws -> (version: Int, state: JSON) {
        let version = room.releasedVersion
        guard version < room.store.version else { return (version, try room.store.stateJSON()) }
        return (version, try state(of: room, at: version, older: []))
    }

    /// The state of a past version of `room` for an HTTP read, reading storage beyond memory.
    func pastState(of room: Room, at version: Int) async throws(TimeTravelError) -> JSON {
        let older = room.needsStoredHistory(toReach: version) ? await storedHistory(of: room, from: version) : []
        do {
            return try state(of: room, at: version, older: older)
        } catch .unknownVersion(let version, _) {
            throw .unknownVersion(version, oldest: await oldestVersion(of: room))
        }
    }

    /// Changes read from storage at once while rebuilding.
    static let rebuildPage = 1_000
}
