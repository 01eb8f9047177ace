import LockstepCore
import LockstepJSON
import LockstepStorage
import Logging

/// What other servers commit and publish, and reading rooms from the shared database.
extension SharedLogPipeline {
    /// Follows what other servers commit and publish, for as long as the storage is open.
    func start(server: isolated some RoomHost) {
        Task { await listen(server: server) }
    }

    private func listen(server: isolated some RoomHost) async {
        let renewal = Task {
            while !Task.isCancelled {
                try? await server.clock.sleep(for: storage.peerLifetime / 3)
                // A server that died stops renewing its peers: reading them again takes them out.
                let watched = server.rooms.values.filter { !$0.sessions.isEmpty }
                for room in watched { readRemotePeers(of: room, server: server) }
                // Nor does it announce what it committed just before it died.
                if !watched.isEmpty, let versions = try? await storage.versions(of: watched.map(\.name)) {
                    for (name, version) in versions { committed(name, version: version, server: server) }
                }
            }
        }
        for await event in storage.events() {
            switch event {
            case .committed(let name, let version):
                committed(name, version: version, server: server)
            case .peersChanged(let name):
                if let room = server.rooms[name] { readRemotePeers(of: room, server: server) }
            case .resynchronise:
                for room in server.rooms.values {
                    state(of: room, server: server).queue.machine.mayHaveMissed()
                    pump(room, server: server)
                    readRemotePeers(of: room, server: server)
                }
            }
        }
        renewal.cancel()
    }

    /// `name` is committed up to `version`: a room in memory that holds less follows.
    private func committed(_ name: String, version: Int, server: isolated some RoomHost) {
        guard let room = server.rooms[name], version > room.engine.store.version else { return }
        let state = state(of: room, server: server)
        state.queue.machine.announced(version: version)
        pump(room, server: server)
        follow(room, state, server: server)
    }

    /// How a catch-up ended.
    enum CatchUp {
        /// The room has everything the database had when it was read.
        case caughtUp
        /// A batch of the room's own is applied but not yet committed, or was taken back while the read ran: what
        /// was read may not follow the room's copy, so nothing was applied and the pump reads again once the write
        /// settles.
        case deferred
        /// The database cannot be read, or the room was dropped.
        case failed
    }

    /// Brings the room up to what the database has. Safe beside the room's own write: changes the room already has
    /// are skipped.
    func catchUp(_ room: Room, server: isolated some RoomHost) async -> CatchUp {
        let name = room.name
        let state = state(of: room, server: server)
        let after = room.engine.store.version
        let before = state.queue.machine.catchUp(after: after, version: after)
        guard before == .apply else { return checkLater(before, room, state, server: server) }
        let result: Result<[StoredChange], StorageError>
        do throws(StorageError) {
            result = .success(try await storage.changes(room: name, after: after))
        } catch {
            result = .failure(error)
        }
        guard server.rooms[name] === room else { return .failed }
        switch result {
        case .success(let changes):
            let decision = state.queue.machine.catchUp(after: after, version: room.engine.store.version)
            guard decision == .apply else { return checkLater(decision, room, state, server: server) }
            guard applyCommitted(changes, to: room, server: server) else {
                abandon(room, because: "its log could not be followed", server: server)
                return .failed
            }
            return .caughtUp
        case .failure(let error):
            server.logger.warning(
                "cannot read what a room missed", metadata: ["room": "\(name)", "error": "\(error)"])
            return .failed
        }
    }

    /// Leaves the check to the pump, once the room's own write has settled.
    private func checkLater(
        _ decision: SharedLogMachine.CatchUpDecision, _ room: Room, _ state: SharedRoomState,
        server: isolated some RoomHost
    ) -> CatchUp {
        if decision == .checkLater(.startPump) { startPump(room, state, server: server) }
        return .deferred
    }

    /// Follows other servers' commits beside the room's own writes, so its clients see them while its next write
    /// waits for the room's lock; one at a time per room, while it makes progress.
    private func follow(_ room: Room, _ state: SharedRoomState, server: isolated some RoomHost) {
        guard state.queue.machine.startFollowing() else { return }
        Task {
            while state.queue.machine.followsOn(
                version: room.engine.store.version, roomActive: server.rooms[room.name] === room)
            {
                guard await catchUp(room, server: server) == .caughtUp else {
                    return state.queue.machine.followingFinished()
                }
            }
        }
    }

    /// Applies changes committed by other servers to the room and sends them to its clients, byte for byte as
    /// stored; false when they do not follow what it holds.
    func applyCommitted(_ changes: [StoredChange], to room: Room, server: isolated some RoomHost) -> Bool {
        guard let last = changes.last, last.version > room.engine.store.version else { return true }
        let published = room.engine.apply(committed: changes, app: server.configuration.app)
        for patch in published.patches {
            room.changesSinceSnapshot += 1
            server.handle(.committed(patch, room))
        }
        return published.failure == nil
    }

    // MARK: - Reading rooms

    /// A client joining a room makes it exist, named by whichever server creates it first; the room is then checked
    /// against the database, and its clients on other servers read.
    func read(
        room: String, creating: Bool, server: isolated some RoomHost
    ) async -> Result<StoredRoomImage, StorageError> {
        var image = await StoredRoomImage.read(
            room: room, from: storage, configuration: server.configuration, repairing: false)
        if creating, case .success(var read) = image, read.epoch == nil {
            do throws(StorageError) {
                read.epoch = try await storage.claim(room: room, epoch: Room.makeEpoch())
                image = .success(read)
            } catch {
                image = .failure(error)
            }
        }
        return image
    }

    /// The room's clients on other servers are read, and what was committed while it was read is fetched next.
    func installed(_ room: Room, server: isolated some RoomHost) {
        state(of: room, server: server).queue.machine.mayHaveMissed()
        readRemotePeers(of: room, server: server)
        pump(room, server: server)
    }

    /// A client resuming from another server never gets a state older than the one it had: the room catches up
    /// first, and its session's mark is read as stored.
    /// While a write of the room's own settles, it waits for it (at most about the database timeout).
    func prepareJoin(of room: Room, session: String?, server: isolated some RoomHost) async -> Bool {
        if let session, let mark = try? await storage.mark(room: room.name, session: session) {
            room.engine.marks.adopt(mark)
        }
        for _ in 0..<250 {
            switch await catchUp(room, server: server) {
            case .caughtUp: return true
            // Dropped meanwhile: the joining client reads it again.
            case .failed: return server.rooms[room.name] !== room
            case .deferred: try? await server.clock.sleep(for: .milliseconds(20))
            }
        }
        return false
    }

    // MARK: - Presence

    /// Publishes this server's clients of the room, with their presence states, when they changed: one publication
    /// at a time, at most one per `presenceInterval`, each with the clients as they are then (states in between are
    /// merged, never queued). States go through the database's table of peers, never through the room's log. A
    /// publication that fails is tried again, every second at most, with the clients as they are then.
    ///
    /// The clients are those of the room by that name in memory now (none when it left), so a room that left memory
    /// and came back has its clients published by the same one publisher.
    func peersChanged(in room: Room, server: isolated some RoomHost) {
        let name = room.name
        let clients = { server.rooms[name]?.sessions.map(\.peer) ?? [] }
        var publication = publications[name] ?? PresencePublication()
        guard var peers = publication.startPublishing(clients()) else { return }
        publications[name] = publication
        Task {
            repeat {
                var wait = server.configuration.presenceInterval
                do throws(StorageError) {
                    try await storage.publish(peers: peers, room: name)
                    publications[name]?.published(peers, succeeded: true)
                } catch {
                    server.logger.warning(
                        "cannot publish presence; trying again", metadata: ["room": "\(name)", "error": "\(error)"])
                    publications[name]?.published(peers, succeeded: false)
                    wait = max(wait, .seconds(1))
                }
                try? await server.clock.sleep(for: wait)
                guard let next = publications[name]?.nextPublication(clients(), stopped: server.isStopped) else {
                    // Nothing published is what a new publisher starts from.
                    if publications[name]?.published == [] { publications[name] = nil }
                    return
                }
                peers = next
            } while true
        }
    }

    /// Reads the room's clients on other servers: a join or leave goes out as presence, a state that changed alone
    /// as the states that changed. A notice arriving during a read has the room read again after it, since the read
    /// may have missed what was just published.
    private func readRemotePeers(of room: Room, server: isolated some RoomHost) {
        let state = state(of: room, server: server)
        guard state.presence.readRequested() else { return }
        let name = room.name
        Task {
            var again = true
            while again {
                let read = state.presence.read(try? await storage.remotePeers(room: name))
                again = read.again
                switch read.change {
                case .nothing: break
                case .membership: server.handle(.peersChanged(room))
                case .states(let clients): server.handle(.peerStatesChanged(clients, room))
                }
            }
        }
    }
}
