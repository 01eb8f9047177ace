import Foundation
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepStorage

/// Durable timers (protocol 1.3), as ``SyncServer`` keeps them on a shared log: each server's real ``TimerSchedule``
/// holds what it scheduled and what it read from the log, and says which are due and where they go; a timer row is stored in the write of the request that
/// schedules it, and a fired timer's change in the write that removes its row, applied only if that write, under the
/// room's lock, still finds the row. Time is the step.
extension ClusterSimulation {
    /// `SyncServer.schedule`: the timer goes into the book at once and into the log with the batch.
    func schedule(
        _ action: JSON, after: Int, timer name: String, id: String, sender: Sender, in room: SimulatedRoom,
        on server: SimulatedServer
    ) {
        let record = TimerRecord(id: id, action: action, sender: sender)
        let (timer, _) = server.timers.schedule(
            room: room.name, name: name, due: step + after, request: record.encoded, now: step)
        storeInBatch((name, timer), in: room)
    }

    /// `SyncServer.cancelTimer`: the row goes whatever the server's book holds (the timer may have been scheduled
    /// through another server and not read here yet, or taken out of the book to fire by a write that then failed);
    /// the log checks that a committed cancel leaves no row of its name.
    func cancelTimer(_ name: String, in room: SimulatedRoom, on server: SimulatedServer) {
        _ = server.timers.remove(TimerKey(room: room.name, name: name))
        storeInBatch((name, nil), in: room)
        room.batchCancels.append((name, room.batchTimerOps.count))
    }

    /// `SyncServer` hands each timer change to its pipeline's queue (`DurabilityQueue.timersChanged`).
    func storeInBatch(_ op: SimulatedLog.TimerOp, in room: SimulatedRoom) {
        room.batchTimerOps.append(op)
        room.loggedTimers[op.name] = op.timer
        room.writes.timerChanged(op, in: room.name)
    }

    /// `SyncServer.fire` in the room's turn, inside its write: unless the server's book or the row the lock read
    /// holds another timer of the name (or none), the action as its sender, and the row's removal in the same write.
    func fire(_ timer: StoredTimer, in room: SimulatedRoom, on server: SimulatedServer) {
        let key = TimerKey(room: timer.room, name: timer.name)
        guard server.timers.book.timer(key)?.order == timer.order else { return }
        _ = server.timers.remove(key)
        // A log of the server's own holds no other server's changes: its book is the truth (`Room.timerIsInLog`).
        #if LOCKSTEP_MUTANTS
        let checksRow = !localLog && !Mutant.isActive(.timerFiresWithoutRowCheck)
        let removesInWrite = !Mutant.isActive(.firedTimerRowRemovedSeparately)
        #else
        let checksRow = !localLog
        let removesInWrite = true
        #endif
        if checksRow, room.loggedTimers[timer.name]?.order != timer.order { return }
        if removesInWrite { storeInBatch((timer.name, nil), in: room) }
        guard let record = TimerRecord(timer.request) else { return violate("timer \(timer.name) cannot be read") }
        let context = ReducerContext(
            sender: record.sender, time: step, version: room.store.version + 1, epoch: "simulation")
        _ = try? perform(
            .action(id: record.id, action: record.action), client: record.sender.client, as: .timer,
            timer: timer.name, in: room, context: context)
        #if LOCKSTEP_MUTANTS
        if !removesInWrite { room.firedAwaitingRemoval.append(timer.name) }
        #endif
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
