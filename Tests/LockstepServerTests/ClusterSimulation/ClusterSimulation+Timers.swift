@testable import LockstepServer
import LockstepStorage

/// Durable timers (protocol 1.3), as ``SyncServer`` keeps them on a shared log: each server's real ``TimerSchedule``
/// holds what it scheduled and what it read from the log, and says which are due and where they go; the room's engine
/// schedules, cancels and fires them in its turns, so a timer row is stored in the write of the request that schedules
/// it, and a fired timer's change in the write that removes its row, applied only if that write, under the room's
/// lock, still finds the row. Time is the step.
extension ClusterSimulation {
    /// `SyncServer` hands each timer change to its pipeline's queue (`DurabilityQueue.timersChanged`).
    func storeInBatch(_ op: SimulatedLog.TimerOp, in room: SimulatedRoom) {
        room.batchTimerOps.append(op)
        room.writes.timerChanged(op, in: room.name)
    }

    /// The mutant's separate write: the rows of timers fired by a committed write are removed by the next one.
    func removeFiredSeparately(_ room: SimulatedRoom, on server: SimulatedServer) {
        guard !room.firedAwaitingRemoval.isEmpty else { return }
        let names = room.firedAwaitingRemoval
        room.firedAwaitingRemoval = []
        for name in names { submit(.timerGone(name), to: room, on: server) }
    }

    /// The server's timer wait ends: each timer due by now goes to its room's turn (the room read first if need be);
    /// with the database away it waits in the book for the next try.
    func fireDue(on server: SimulatedServer) {
        guard server.alive else { return }
        let (deliveries, _) = server.timers.waitEnded(now: step) { server.rooms[$0] != nil }
        for delivery in deliveries {
            switch delivery {
            case .fire(let timer):
                deliver(timer, to: server.rooms[timer.room]!, on: server)
            case .readRoom(let name):
                tasks.append(.timerRoomRead(server: server.index, incarnation: server.incarnation, room: name))
            }
        }
    }

    /// `SyncServer.fireAwaiting`: the room is read (unless something read it meanwhile), and the timers that came
    /// due in it, then and while it was read, go to its turn in order.
    func timerRoomRead(_ name: String, on server: SimulatedServer) {
        let room = server.rooms[name] ?? loadRoom(name, on: server)
        for timer in server.timers.roomRead(name, found: room != nil) { deliver(timer, to: room!, on: server) }
    }

    private func deliver(_ timer: StoredTimer, to room: SimulatedRoom, on server: SimulatedServer) {
        note("server \(server.index) fires timer \(timer.name) of \(timer.room) (due \(timer.due))")
        submit(.timer(timer), to: room, on: server)
    }

    /// `SyncServer.loadTimers`: at start, and on each poll, the rows the log holds go into the book.
    func loadTimers(on server: SimulatedServer) {
        guard server.alive, !log.isDown(at: step) else { return }
        let rows = log.rooms.keys.sorted().flatMap { name in
            let timers = log.rooms[name]!.timers
            return timers.keys.sorted().map { timers[$0]! }
        }
        _ = server.timers.load(rows)
    }

    /// Whether the log still holds a timer row.
    var timersPending: Bool { log.rooms.values.contains { !$0.timers.isEmpty } }
}
