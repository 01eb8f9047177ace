import CoreMetrics
import Logging
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Rooms in a log of this server's own (SQLite): a change is applied at once and its patch and ack leave once the log
/// has it.
///
/// Write-ahead with group commit: one write for every room at a time, and everything produced while it is in flight
/// goes into the next, so a burst of actions costs one transaction, not one per action.
final class LocalLogPipeline: LoggingPipeline {
    let log: any RoomStorage
    private let queue = DurabilityQueue<RoomRelease>()

    init(log: any RoomStorage) {
        self.log = log
    }

    var isAvailable: Bool { true }
    var evictsIdleRooms: Bool { true }
    var isSettled: Bool { queue.isIdle && !queue.hasWrites && !queue.writeScheduled }

    func commit(
        _ patch: Room.LoggedPatch, message: [UInt8], record: ChangeRecord, in room: Room, server: isolated some RoomHost
    ) {
        queue.append(
            patch, message: message, record: record, in: room, configuration: server.configuration,
            logger: server.logger)
        storeEpoch(of: room)
        scheduleWrite(server: server)
    }

    func timersChanged(scheduled: [StoredTimer], gone: [TimerKey], in room: Room, server: isolated some RoomHost) {
        queue.timersChanged(scheduled: scheduled, gone: gone)
        // A room used only for a timer exists too: read back, it is at version 0, not never used.
        storeEpoch(of: room)
        scheduleWrite(server: server)
    }

    func markMoved(_ mark: StoredMark, in room: Room, server: isolated some RoomHost) {
        queue.marks.append(mark)
        storeEpoch(of: room)
        scheduleWrite(server: server)
    }

    func reply(_ answer: RequestAnswer, to requester: any Requester, server: isolated some RoomHost) {
        if queue.isIdle {
            requester.answer(answer)
        } else {
            queue.pending.append(.reply(requester, answer))
        }
    }

    /// The room's snapshot goes with the next write; the room leaves once everything queued before it is stored.
    func evict(_ room: Room, server: isolated some RoomHost) {
        if room.changesSinceSnapshot > 0,
            let snapshot = PendingSnapshot(of: room, configuration: server.configuration, logger: server.logger)
        {
            queue.snapshots.append(snapshot)
        }
        queue.pending.append(.evict(room, version: room.engine.store.version))
        scheduleWrite(server: server)
    }

    func read(
        room: String, creating: Bool, server: isolated some RoomHost
    ) async -> Result<StoredRoomImage, StorageError> {
        await StoredRoomImage.read(room: room, from: log, configuration: server.configuration, repairing: true)
    }

    /// Has the next write store `room`'s epoch, once: it goes with the room's first change, mark or timer.
    private func storeEpoch(of room: Room) {
        guard !room.epochStored else { return }
        room.epochStored = true
        queue.epochs[room.name] = room.epoch
    }

    /// Starts a write after the current callback, so changes arriving together share one transaction.
    private func scheduleWrite(server: isolated some RoomHost) {
        guard queue.writeWanted() else { return }
        Task { await self.write(server: server) }
    }

    /// Writes everything waiting, then what arrived meanwhile, until nothing waits (`DurabilityQueue.startWrite`).
    private func write(server: isolated some RoomHost) async {
        while !server.isStopped, let step = queue.startWrite(sessions: server.configuration.sessionWrites) {
            guard case .write(let rows, let pending, let sessions) = step else {
                if case .release(let items) = step { server.handle(.released(items)) }
                return
            }
            let snapshots = await PendingSnapshot.encodedAway(pending)
            let result: Result<Void, StorageError>
            do throws(StorageError) {
                try await log.append(
                    changes: rows, snapshots: snapshots, sessions: sessions,
                    keepHistory: server.configuration.keepHistory)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            guard !server.isStopped else { return }
            switch queue.writeReturned(stored: (try? result.get()) != nil, sessions: sessions) {
            case .stored(let written):
                for mark in sessions.marks { server.rooms[mark.room]?.engine.marks.stored(mark) }
                server.handle(.released(written))
            case .failed(let release, let rooms, let written):
                // Epochs not stored go with the room's next write.
                for room in sessions.epochs.keys { server.rooms[room]?.epochStored = false }
                server.handle(.released(release))
                if case .failure(let error) = result { fail(rooms, of: written, because: error, server: server) }
            }
        }
    }

    /// A write failed: nothing of it is acknowledged. Its rooms go back to what the log has, their clients are told
    /// and disconnected, so they reconnect to the stored state, and their timers are read from the log again.
    private func fail(
        _ affected: Set<String>, of written: [RoomRelease], because error: StorageError,
        server: isolated some RoomHost
    ) {
        server.logger.error("cannot store changes", metadata: ["error": "\(error)", "rooms": "\(affected.sorted())"])
        let notice = ServerMessage.error(
            id: nil, code: "unavailable",
            message:
                "changes could not be stored (\(error)); nothing was acknowledged: reconnect to get the stored state"
        )
        for name in affected.sorted() {
            if let room = written.first(where: { $0.roomName == name })?.room ?? server.rooms[name] {
                server.handle(.roomLost(room, notice: notice, reason: "storage failure"))
            }
            server.handle(.timersUnsure(room: name))
        }
    }
}

@available(*, unavailable)
extension LocalLogPipeline: Sendable {}
