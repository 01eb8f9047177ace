import LockstepCore
import LockstepJSON
@testable import LockstepServer

/// What holds after every step, and once the cluster has settled.
extension ClusterSimulation {
    /// One order: every server's copy of a room (outside a batch it has applied and not committed) and every
    /// client's mirror is the log's state at its version, with the log's undo and redo counts.
    func checkInvariants() {
        for server in servers where server.alive {
            // Outside a batch applied and not committed; on a log of its own, with every change released.
            for room in server.sortedRooms
            where localLog
                ? room.engine.released.version == room.engine.store.version : room.machine.write?.batchBase == nil
            {
                let version = room.engine.store.version
                let state = try? room.engine.store.stateJSON()
                let history = room.engine.store.history
                check(
                    "server \(server.index)'s copy of \(room.name)", version: version, state: state,
                    undo: history.undoCount, redo: history.redoCount, in: room.name)
            }
        }
        for client in clients {
            guard let mirror = client.mirror else { continue }
            check(
                "client \(client.index)'s mirror", version: mirror.version, state: mirror.state, undo: mirror.undo,
                redo: mirror.redo, in: client.room, seenThrough: client.sight)
        }
    }

    /// `state` is the log's at `version`, as `sight` sees it.
    private func check(
        _ who: String, version: Int, state: JSON?, undo: Int, redo: Int, in name: String,
        seenThrough sight: any RoomSight = WholeRoom()
    ) {
        let room = log.rooms[name]!
        guard version < room.states.count else {
            return violate("\(who) is at version \(version), which the log does not have (it has \(room.rows.count))")
        }
        if state != sight.value(in: room.states[version], parts: app.privateParts) {
            violate("\(who) at version \(version) differs from the log's state")
        }
        if undo != room.counts[version].undo || redo != room.counts[version].redo {
            violate(
                "\(who) at version \(version) can undo \(undo) and redo \(redo); the log says \(room.counts[version])")
        }
    }

    /// Nothing runs any more: every client is in, every request answered, and everyone has the log's last version;
    /// every timer scheduled and not cancelled or replaced has fired (once: the log's checks see to that), and no
    /// timer row is left.
    func checkSettled() {
        for name in log.rooms.keys.sorted() {
            let room = log.rooms[name]!
            if !room.timers.isEmpty { violate("\(name) still holds timer rows \(room.timers.keys.sorted())") }
            for id in room.timerFates.keys.sorted() where room.timerFates[id] == .pending {
                violate("the timer \(id) scheduled in \(name) never fired")
            }
        }
        for client in clients {
            if !client.joined { violate("client \(client.index) never got back in") }
            if !client.unacked.isEmpty {
                violate("client \(client.index)'s requests \(client.unacked.map(\.id)) were never answered")
            }
            let latest = log.version(of: client.room)
            guard let mirror = client.mirror else { continue }
            // A view's client has the last version that changed its view, and nothing changed it since.
            if client.view == nil ? mirror.version != latest : seen(by: client, at: latest) != mirror.state {
                violate("client \(client.index) settled at \(mirror.version), the log at \(latest)")
            }
        }
        checkPresenceSettled()
        for server in servers {
            for room in server.sortedRooms {
                if !room.machine.isIdle || room.transaction != nil || waitsForLog(room, on: server) {
                    violate("server \(server.index)'s \(room.name) is still busy: \(room.machine)")
                }
                if !room.connections.isEmpty, room.engine.store.version != log.version(of: room.name) {
                    violate(
                        "server \(server.index)'s \(room.name) settled at \(room.engine.store.version), behind the log")
                }
            }
        }
    }
}
