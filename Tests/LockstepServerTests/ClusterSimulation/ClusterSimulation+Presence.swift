import LockstepCore
import LockstepJSON
@testable import LockstepServer

/// Presence across servers: what `SharedLogPipeline` does around each room's real ``PresenceExchange``, with the
/// table of peers, its notices and the waits between publications as tasks of the scheduler.
extension ClusterSimulation {
    /// The client says what it is doing: a presence state, never part of the room's state.
    func setPresence(_ client: SimulatedClient) {
        client.presenceStates += 1
        note("client \(client.index) sets its presence state to \(client.presenceStates)")
        sendFrame(.presence(["x": .int(client.presenceStates)]), from: client)
    }

    /// The room's clients on this server, as it publishes them.
    func currentPeers(of room: SimulatedRoom) -> [Peer] {
        room.connections.map { id in
            Peer(client: "c\(id)", name: clients[connections[id]!.client].session, state: room.presenceStates[id])
        }
    }

    /// The peers of `name` that a read by `server` finds: every other living server's last publication (a dead
    /// server's, or an earlier life's, has expired).
    func storedPeers(of name: String, besides server: Int) -> [Peer] {
        servers.filter { $0.alive && $0.index != server }.flatMap { other -> [Peer] in
            guard let row = log.peers[name]?[other.index], row.incarnation == other.incarnation else { return [] }
            return row.peers
        }
    }

    /// The room's clients on `server` now, whichever copy of the room it holds (none when it holds none).
    func currentPeers(of publisher: String, on server: SimulatedServer) -> [Peer] {
        #if LOCKSTEP_MUTANTS
        if let copy = copies[publisher] { return server.rooms[copy.name] === copy ? currentPeers(of: copy) : [] }
        #endif
        return server.rooms[publisher].map(currentPeers) ?? []
    }

    /// `SharedLogPipeline.peersChanged`: one publisher per room name (under the mutant, per copy of the room).
    func peersChanged(in room: SimulatedRoom, on server: SimulatedServer) {
        var name = room.name
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.publicationPerRoomCopy) {
            name = "\(room.name)#\(room.id)"
            copies[name] = room
        }
        #endif
        var publication = server.publications[name] ?? PresencePublication()
        guard let peers = publication.startPublishing(currentPeers(of: name, on: server)) else { return }
        server.publications[name] = publication
        tasks.append(.publish(server: server.index, incarnation: server.incarnation, room: name, peers: peers))
    }

    /// One publication reaches the database; the wait before the next follows.
    func publish(_ peers: [Peer], of publisher: String, server index: Int, incarnation: Int) {
        let server = servers[index]
        guard server.alive, server.incarnation == incarnation else { return }
        let stored = !log.isDown(at: step)
        note("server \(index) publishes \(publisher)'s \(peers.count) peers\(stored ? "" : ", and fails")")
        server.publications[publisher]?.published(peers, succeeded: stored)
        let name = String(publisher.prefix { $0 != "#" })
        if stored {
            log.peers[name, default: [:]][index] = (incarnation, peers)
            for other in servers where other.index != index && other.alive {
                if faultsOn, chance(faults.lostNotice) { continue }
                tasks.append(.peersNotice(server: other.index, incarnation: other.incarnation, room: name))
            }
        }
        tasks.append(.publicationWaited(server: index, incarnation: incarnation, room: publisher))
    }

    /// The wait after a publication is over: the next one goes out if the clients changed since.
    func publicationWaited(_ name: String, server index: Int, incarnation: Int) {
        let server = servers[index]
        guard server.alive, server.incarnation == incarnation else { return }
        guard let peers = server.publications[name]?.nextPublication(currentPeers(of: name, on: server)) else {
            if server.publications[name]?.published == [] { server.publications[name] = nil }
            return
        }
        tasks.append(.publish(server: index, incarnation: incarnation, room: name, peers: peers))
    }

    /// `SharedLogPipeline.readRemotePeers`: a read starts unless one runs (which then reads again).
    func readPeers(of room: SimulatedRoom, on server: SimulatedServer) {
        guard room.presence.readRequested() else { return }
        tasks.append(.peersRead(server: server.index, incarnation: server.incarnation, room: room.id, name: room.name))
    }

    /// A notice of another server's publication: the room, if in memory, reads its peers.
    func peersNoticed(_ name: String, on server: SimulatedServer) {
        guard let room = server.rooms[name] else { return }
        room.peersNoticedAt = step
        readPeers(of: room, on: server)
    }

    /// The read reaches the database, and its result (nil when the database is away) goes back to the server.
    func peersReadAtDatabase(server index: Int, incarnation: Int, room id: Int, name: String) {
        guard let room = liveRoom(index, incarnation, id, name) else { return }
        room.peersReadAt = step
        let peers = log.isDown(at: step) ? nil : storedPeers(of: name, besides: index)
        tasks.append(.peersReadDone(server: index, incarnation: incarnation, room: id, name: name, peers: peers))
    }

    func peersRead(_ peers: [Peer]?, server index: Int, incarnation: Int, room id: Int, name: String) {
        guard let room = liveRoom(index, incarnation, id, name) else { return }
        let read = room.presence.read(peers)
        if read.again {
            tasks.append(.peersRead(server: index, incarnation: incarnation, room: id, name: name))
        } else if peers != nil, room.peersNoticedAt > room.peersReadAt {
            violate(
                "server \(index)'s \(name) stopped reading its peers at step \(room.peersReadAt), before the notice of "
                    + "step \(room.peersNoticedAt)")
        }
    }

    /// Settled, every server has published its clients of each room it holds, and has read every other's.
    func checkPresenceSettled() {
        for server in servers where server.alive {
            for room in server.sortedRooms {
                let published = log.peers[room.name]?[server.index]
                let current = currentPeers(of: room)
                if published.map({ $0.incarnation == server.incarnation ? $0.peers : [] }) ?? [] != current {
                    violate("server \(server.index)'s clients of \(room.name) are not what it published")
                }
                guard !room.connections.isEmpty else { continue }
                let others = servers.filter { $0.alive && $0.index != server.index }
                    .flatMap { $0.rooms[room.name].map(currentPeers) ?? [] }
                if room.presence.remote != others {
                    violate("server \(server.index) does not see the clients of \(room.name) on the other servers")
                }
            }
        }
    }
}
