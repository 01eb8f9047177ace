import CoreMetrics
import Dispatch
import Foundation
import Logging
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Several servers, one database: each room's changes are applied and committed while the storage holds the room
/// against every other server, after what they committed before; what they commit reaches this server's clients as
/// the stored bytes. No server owns a room, so any of them may stop at any time.
extension SyncServer {
    static let unavailable = "the server cannot reach its database; nothing was applied, send it again later"

    // MARK: - Requests and writes

    /// Queues a request, an effect's action or a reply behind everything the room received before it.
    func enqueue(_ item: SharedRoomState.Incoming, in room: Room) {
        room.shared.incoming.append(item)
        pump(room)
    }

    /// A reply goes out now unless something the room received before it is still waiting or being written.
    func replyInTurn(_ frame: OutboundFrame, to session: Session) {
        let room = session.room
        if room.shared.preparing {
            room.writes.pending.append(.reply(session, frame))
        } else if room.shared.incoming.isEmpty, room.writes.isIdle {
            session.reply(frame)
        } else {
            enqueue(.reply(session, frame), in: room)
        }
    }

    /// Runs the room's writes and catch-ups, one at a time, until nothing waits.
    func pump(_ room: Room) {
        guard shared != nil, !room.shared.pumping else { return }
        room.shared.pumping = true
        Task {
            while !self.isStopped, self.rooms[room.name] === room {
                if room.shared.incoming.contains(where: \.needsWrite) || room.writes.hasWrites {
                    await self.write(room)
                } else if !room.shared.incoming.isEmpty {
                    let replies = room.shared.incoming
                    room.shared.incoming.removeAll()
                    for case .reply(let session, let frame) in replies { session.reply(frame) }
                } else if room.shared.isBehind(version: room.store.version) {
                    room.shared.needsCheck = false
                    if await !self.catchUp(room) {
                        try? await Task.sleep(for: .milliseconds(500))
                        room.shared.needsCheck = true
                    }
                } else {
                    break
                }
            }
            room.shared.pumping = false
            self.roomBecameIdle(room)
        }
    }

    /// One locked write: what other servers committed, then everything the room received, committed together.
    private func write(_ room: Room) async {
        guard let shared else { return }
        room.shared.batch = room.shared.incoming
        room.shared.incoming.removeAll()
        let sessions = Array(Set(room.shared.batch.compactMap(\.sessionName)))
        let name = room.name
        let id = ObjectIdentifier(room)
        do {
            try await shared.write(room: name, after: room.store.version, sessions: sessions) { catchUp in
                await self.prepare(name, id, catchUp)
            }
            room.shared.before = nil
            room.shared.batch.removeAll()
            let written = room.writes.finished()
            marksStored(room.shared.batchMarks)
            release(written)
        } catch {
            failWrite(of: room, because: error)
        }
    }

    /// Inside the locked write: applies what others committed, then the batch; returns what to commit.
    private func prepare(_ name: String, _ id: ObjectIdentifier, _ catchUp: RoomCatchUp) -> RoomWrite {
        guard let room = rooms[name], ObjectIdentifier(room) == id else {
            return RoomWrite(changes: [], snapshots: [], sessions: sessionWrites())
        }
        guard applyCommitted(catchUp.missed, to: room) else {
            // The room cannot continue from what it holds: nothing is applied, and it is read again.
            abandon(room, because: "its log could not be followed")
            return RoomWrite(changes: [], snapshots: [], sessions: sessionWrites())
        }
        if let epoch = catchUp.epoch {
            room.epoch = epoch
            room.epochStored = true
        }
        for mark in catchUp.marks { room.marks.adopt(mark) }
        room.shared.before = (room.store.version, room.store.history)
        room.shared.preparing = true
        for item in room.shared.batch {
            switch item {
            case .request(let request, let session):
                if isNew(request, from: session) { change(request.message, seq: request.seq, from: session) }
            case .effect(let action):
                apply(action, in: room)
            case .reply(let session, let frame):
                room.writes.pending.append(.reply(session, frame))
            }
        }
        room.shared.preparing = false
        let (rows, snapshots, sessions) = room.writes.takeWrite(sessions: sessionWrites())
        room.shared.batchRows = rows
        room.shared.batchMarks = sessions.marks
        room.shared.batchEpoch = !sessions.epochs.isEmpty
        return RoomWrite(changes: rows, snapshots: snapshots, sessions: sessions)
    }

    /// A locked write failed: its requests are answered `unavailable` (nothing of them was applied), and a batch
    /// already applied to the room is taken back, so the room is again what its clients have.
    private func failWrite(of room: Room, because error: StorageError) {
        logger.error("cannot commit a room", metadata: ["room": "\(room.name)", "error": "\(error)"])
        let batch = room.shared.batch
        room.shared.batch.removeAll()
        _ = room.writes.finished()
        if room.shared.before != nil { rollBack(room) }
        for item in batch {
            switch item {
            case .request(let request, let session):
                let message = ServerMessage.error(
                    id: request.message.id, code: "unavailable", message: Self.unavailable)
                session.reply(OutboundFrame(text: message.serialized()))
            case .reply(let session, let frame):
                session.reply(frame)
            case .effect(let action):
                logger.warning(
                    "an effect's action is lost", metadata: ["room": "\(room.name)", "action": "\(action.json)"])
            }
        }
    }

    /// Takes back the changes, marks and epoch of a batch that was not committed (or may not have been: then the next
    /// catch-up brings back what was). Clients that joined meanwhile saw them, and are sent away to resume.
    private func rollBack(_ room: Room) {
        guard let before = room.shared.before else { return }
        room.shared.before = nil
        do {
            var state = try room.store.stateJSON()
            for row in room.shared.batchRows.reversed() {
                try JSONPatch(json: JSON(parsing: row.inverse)).apply(to: &state)
            }
            room.store = try configuration.app.restoreStore(
                state: state, version: before.version, history: before.history)
        } catch {
            return abandon(room, because: "a change could not be taken back: \(error)")
        }
        room.timeline.forget(after: before.version)
        room.forgetEncodedState()
        room.changesSinceSnapshot = max(0, room.changesSinceSnapshot - room.shared.batchRows.count)
        for mark in room.shared.batchMarks { room.marks.rollBack(mark.session) }
        if room.shared.batchEpoch { room.epochStored = false }
        room.shared.needsCheck = true
        let notice = ServerMessage.error(id: nil, code: "unavailable", message: "reconnect to resume")
        for session in room.sessions where session.syncedVersion > before.version {
            sendAway(session, telling: notice, reason: "the changes it was sent were taken back")
        }
    }

    /// Drops a room whose memory cannot be trusted; its clients are told and disconnected, and resume from the log.
    private func abandon(_ room: Room, because reason: String) {
        guard rooms[room.name] === room else { return }
        let notice = ServerMessage.error(
            id: nil, code: "unavailable", message: "the room must be read again (\(reason)); reconnect")
        drop(room, telling: notice, reason: "room reloading")
    }

    // MARK: - What other servers commit

    /// Brings the room up to what the database has; false when the database cannot be read or the room was dropped.
    ///
    /// Safe beside the room's own write: changes the room already has are skipped, and while a batch of its own is
    /// applied but not yet committed, nothing is applied (the room holds the lock, so nothing newer exists) and the
    /// check is left to the pump.
    @discardableResult
    func catchUp(_ room: Room) async -> Bool {
        let name = room.name
        let after = room.store.version
        let result = await readShared { try $0.changes(room: name, after: after) }
        guard rooms[name] === room else { return false }
        switch result {
        case .success(let changes):
            guard room.shared.before == nil else {
                room.shared.needsCheck = true
                return true
            }
            guard applyCommitted(changes, to: room) else {
                abandon(room, because: "its log could not be followed")
                return false
            }
            return true
        case .failure(let error):
            logger.warning("cannot read what a room missed", metadata: ["room": "\(name)", "error": "\(error)"])
            return false
        }
    }

    /// Follows other servers' commits beside the room's own writes, so its clients see them while its next write
    /// waits for the room's lock; one at a time per room, while it makes progress.
    private func follow(_ room: Room) {
        guard room.shared.pumping, !room.shared.following else { return }
        room.shared.following = true
        Task {
            var reached = -1
            while self.rooms[room.name] === room, room.shared.announced > room.store.version,
                room.store.version > reached
            {
                reached = room.store.version
                guard await self.catchUp(room) else { break }
            }
            room.shared.following = false
        }
    }

    /// Applies changes committed by other servers to the room and sends them to its clients, byte for byte as
    /// stored; false when they do not follow what it holds.
    func applyCommitted(_ changes: [StoredChange], to room: Room) -> Bool {
        let fresh = changes.drop { $0.version <= room.store.version }
        guard let first = fresh.first else { return true }
        guard first.version == room.store.version + 1 else { return false }
        let replay: RoomReplay
        do {
            replay = try RoomReplay(continuing: room.store, with: Array(fresh), app: configuration.app)
        } catch {
            return false
        }
        room.store = replay.store
        for change in fresh where change.version <= replay.store.version {
            guard let patch = Self.loggedPatch(change),
                let inverse = try? JSONPatch(json: JSON(parsing: change.inverse))
            else { return false }
            room.timeline.record(version: change.version, inverse: inverse, stored: change.version)
            room.changesSinceSnapshot += 1
            broadcast(patch, in: room)
        }
        return replay.damagedFrom == nil
    }

    /// Follows what other servers commit and publish, for as long as the storage is open.
    func listen(to shared: any SharedRoomStorage) async {
        let renewal = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: shared.peerLifetime / 3)
                // A server that died stops renewing its peers: reading them again takes them out.
                for room in self.rooms.values where !room.sessions.isEmpty { self.readRemotePeers(of: room) }
            }
        }
        for await event in shared.events() {
            switch event {
            case .committed(let name, let version):
                guard let room = rooms[name], version > room.store.version else { continue }
                room.shared.announced = max(room.shared.announced, version)
                pump(room)
                follow(room)
            case .peersChanged(let name):
                if let room = rooms[name] { readRemotePeers(of: room) }
            case .resynchronise:
                for room in rooms.values {
                    room.shared.needsCheck = true
                    pump(room)
                    readRemotePeers(of: room)
                }
            }
        }
        renewal.cancel()
    }

    // MARK: - Loading

    /// Reads the room off the loop for `connection`, which waits (unread) with any others that asked meanwhile.
    ///
    /// A room already in memory is first brought up to what the database has, so a client resuming from another
    /// server never gets a state older than the one it had, and its session's mark is read as stored.
    func awaitRoom(_ name: String, for connection: WebSocketConnection, grant: AccessGrant) {
        connection.pauseReceiving()
        guard let room = rooms[name] else { return awaitRoom(name, .socket(connection, grant)) }
        let session = connection.query["session"].flatMap(SessionName.init)?.value
        Task {
            if let session {
                let mark = await self.readShared { try $0.mark(room: name, session: session) }
                if case .success(let mark?) = mark { self.rooms[name]?.marks.adopt(mark) }
            }
            guard await self.catchUp(room) || self.rooms[name] !== room else {
                // Joined now, a resuming client could be sent a state older than its own.
                return RoomWaiter.socket(connection, grant).refuse(because: .unavailable("the room cannot be read"))
            }
            self.joinRead(connection, grant: grant, room: name)
        }
    }

    /// Joins a client whose room was read (or, if it left memory meanwhile, reads it again).
    private func joinRead(_ connection: WebSocketConnection, grant: AccessGrant, room name: String) {
        guard connection.isOpen else { return }
        guard let room = rooms[name] else { return awaitRoom(name, .socket(connection, grant)) }
        connection.resumeReceiving()
        join(connection, to: room, grant: grant)
    }

    /// On shared storage, a read of a room not in memory is answered once the room is read off the loop; nil when
    /// the request is not such a read.
    func deferredRead(_ request: HTTPRequest) -> HTTPResponse? {
        guard shared != nil else { return nil }
        let path = request.path.hasSuffix("/log") ? String(request.path.dropLast("/log".count)) : request.path
        guard let name = RoomName(path: path)?.value, rooms[name] == nil else { return nil }
        if let refusal = refusal(for: request, room: name) { return refusal }
        let promise = HTTPPromise()
        awaitRoom(name, .read(promise, request))
        return .deferred(promise)
    }

    private func awaitRoom(_ name: String, _ waiter: RoomWaiter) {
        joining[name, default: []].append(waiter)
        guard joining[name]?.count == 1 else { return }
        let configuration = configuration
        Task {
            var image = await self.readShared {
                try StoredRoomImage.read(room: name, from: $0, configuration: configuration)
            }
            if case .success(var read) = image, read.epoch == nil, let shared, self.hasJoiningClient(name) {
                // A client makes the room exist, named by whichever server creates it first.
                do throws(StorageError) {
                    read.epoch = try await shared.claim(room: name, epoch: Room.makeEpoch())
                    image = .success(read)
                } catch {
                    image = .failure(error)
                }
            }
            self.roomRead(name, image)
        }
    }

    private func hasJoiningClient(_ name: String) -> Bool {
        joining[name, default: []].contains { if case .socket = $0 { true } else { false } }
    }

    private func roomRead(_ name: String, _ result: Result<StoredRoomImage, StorageError>) {
        let waiting = joining.removeValue(forKey: name) ?? []
        let image: StoredRoomImage
        switch result {
        case .success(let read):
            image = read
        case .failure(let error):
            logger.error("cannot load a room", metadata: ["room": "\(name)", "error": "\(error)"])
            for waiter in waiting { waiter.refuse(because: error) }
            return
        }
        // A room no client ever joined is made only for a client joining it; a read of it finds nothing.
        let joins = waiting.contains { if case .socket = $0 { true } else { false } }
        guard rooms[name] != nil || image.replay != nil || image.epoch != nil || joins else {
            for case .read(let promise, _) in waiting {
                promise.complete(with: HTTPResponse(status: 404, text: "no room named \(name)\n"))
            }
            return
        }
        let room = rooms[name] ?? install(image, as: name)
        // Whatever was committed while it was read is fetched next.
        room.shared.needsCheck = true
        for waiter in waiting {
            switch waiter {
            case .socket(let connection, let grant):
                joinRead(connection, grant: grant, room: name)
            case .read(let promise, let request):
                promise.complete(with: respond(to: request))
            }
        }
        readRemotePeers(of: room)
        pump(room)
    }

    /// Runs a blocking storage call on the reading queue, off the loop.
    func readShared<T: Sendable>(
        _ body: @escaping @Sendable (any RoomStorage) throws -> T
    ) async -> Result<T, StorageError> {
        guard let log else { return .failure(.database("no storage")) }
        return await withCheckedContinuation { continuation in
            readers.async {
                do {
                    continuation.resume(returning: .success(try body(log)))
                } catch let error as StorageError {
                    continuation.resume(returning: .failure(error))
                } catch {
                    continuation.resume(returning: .failure(.database("\(error)")))
                }
            }
        }
    }

    // MARK: - Presence

    /// Publishes this server's clients of the room when they changed, one publication at a time.
    func publishPeers(of room: Room) {
        guard let shared, !room.shared.publishing else { return }
        let name = room.name
        room.shared.publishing = true
        Task {
            while room.sessions.map(\.peer) != room.shared.publishedPeers {
                let peers = room.sessions.map(\.peer)
                do {
                    try await shared.publish(peers: peers, room: name)
                    room.shared.publishedPeers = peers
                } catch {
                    logger.warning("cannot publish presence", metadata: ["room": "\(name)", "error": "\(error)"])
                    break
                }
            }
            room.shared.publishing = false
        }
    }

    /// Reads the room's clients on other servers; a change goes out as presence.
    func readRemotePeers(of room: Room) {
        guard let shared, !room.shared.readingPeers else { return }
        let name = room.name
        room.shared.readingPeers = true
        Task {
            if let peers = try? await shared.remotePeers(room: name), peers != room.shared.remotePeers {
                room.shared.remotePeers = peers
                self.schedulePresence(in: room)
            }
            room.shared.readingPeers = false
        }
    }
}
