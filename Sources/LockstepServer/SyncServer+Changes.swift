import LockstepCore
import LockstepJSON
import LockstepTransport

/// A room's committed changes from Swift, for an app that embeds the server: a search index or an audit trail that
/// must see every change, in order, as clients see them.
extension SyncServer {
    /// Every change of `room` from now on, in order, each once it is as durable as an ack (changes through other
    /// servers of a cluster included). The room stays in memory while the sequence is iterated.
    ///
    /// The sequence is bounded: a consumer more than `bufferingLimit` changes behind is not waited for; its sequence
    /// ends, and it reads what it missed with `GET /rooms/ROOM/log?after=V` or starts again. It ends too when the
    /// server drains.
    ///
    /// - Parameters:
    ///   - room: The room's name; it is read or created as a client joining it would.
    ///   - bufferingLimit: Changes held for a slow consumer before its sequence ends.
    /// - Throws: ``RoomRequestError`` `unavailable` when storage cannot be read.
    public func changes(
        of room: String, bufferingLimit: Int = 10_000
    ) async throws(RoomRequestError) -> AsyncStream<CommittedChange> {
        guard !isDraining else { throw RoomRequestError(code: "unavailable", message: Self.drainingNotice) }
        let found = try await loadedRoom(room)
        let (stream, continuation) = AsyncStream.makeStream(
            of: CommittedChange.self, bufferingPolicy: .bufferingOldest(max(1, bufferingLimit)))
        listenerCount += 1
        let key = listenerCount
        found.changeListeners[key] = continuation
        found.idleSince = nil
        let name = found.name
        continuation.onTermination = { _ in
            Task { await self.listenerEnded(key, inRoom: name) }
        }
        return stream
    }

    /// Hands a released patch to the room's listeners; one that cannot take it more ends.
    func tellListeners(_ patch: Room.LoggedPatch, in room: Room) {
        guard !room.changeListeners.isEmpty,
            case .patch(let version, let ops, let cause, _, _)? = try? ServerMessage(
                json: JSON(parsing: patch.frame.payload))
        else { return }
        let change = CommittedChange(version: version, ops: ops, cause: cause)
        for (key, listener) in room.changeListeners {
            if case .dropped = listener.yield(change) {
                room.changeListeners[key] = nil
                listener.finish()
            }
        }
    }

    /// The server drains: every listener's sequence ends.
    func finishListeners() {
        for room in rooms.values {
            for listener in room.changeListeners.values { listener.finish() }
            room.changeListeners.removeAll()
        }
    }

    private func listenerEnded(_ key: Int, inRoom name: String) {
        guard let room = rooms[name], room.changeListeners.removeValue(forKey: key) != nil else { return }
        if room.isIdle { roomBecameIdle(room) }
    }
}
