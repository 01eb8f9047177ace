import CoreMetrics
import Dispatch
import Synchronization
import LockstepCore
public import LockstepStorage
import LockstepJSON
import LockstepTransport
public import Logging

/// A Lockstep server: rooms of clients over WebSocket, every change broadcast as one JSON Patch.
///
/// The actor runs on the transport's service thread (its executor is the transport's loop), so
/// rooms and connections are touched by one thread only, and the compiler checks it. Effects
/// and other threads reach it with `await`, through the loop's inbox.
///
/// ```swift
/// let server = try SyncServer(configuration: ServerConfiguration(app: .counter))
/// // ... later
/// server.shutdown()
/// ```
public actor SyncServer {
    public nonisolated let configuration: ServerConfiguration
    nonisolated let transport: WebSocketServer
    nonisolated let metrics: ServerMetrics
    /// The durable log; nil with `--memory`.
    nonisolated let log: (any RoomStorage)?
    /// Runs log writes off the loop thread, one at a time, in order.
    nonisolated let writer = DispatchQueue(label: "lockstep.storage")
    let durability = DurabilityQueue()
    /// The log when several servers share it: rooms are then committed one by one, under the storage's lock.
    nonisolated let shared: (any SharedRoomStorage)?
    /// Runs reads of shared storage off the loop thread, several at once.
    nonisolated let readers = DispatchQueue(label: "lockstep.storage.reads", attributes: .concurrent)
    /// Connections waiting for their room to be read from shared storage, by room.
    var joining: [String: [RoomWaiter]] = [:]
    let logger: Logger
    var rooms: [String: Room] = [:]
    private var clientCount = 0
    private var connectionCount = 0
    /// A pass returning freed memory to the system is due (see `evict`).
    var trimScheduled = false
    /// Set by `shutdown`: late timers find the log closed and do nothing.
    private nonisolated let stopped = Atomic(false)
    nonisolated var isStopped: Bool { stopped.load(ordering: .relaxed) }

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        transport.loop.asUnownedSerialExecutor()
    }

    /// Starts listening at once; throws if the address cannot be bound or the data directory used.
    ///
    /// Rooms go to `storage` when given, else to a ``RoomLog`` in `configuration.dataDirectory`,
    /// else nowhere (memory only).
    public init(
        configuration: ServerConfiguration, storage: (any RoomStorage)? = nil,
        logger: Logger = Logger(label: "lockstep")
    ) throws {
        let bridge = TransportBridge()
        var transportConfiguration = WebSocketServer.Configuration()
        transportConfiguration.host = configuration.host
        transportConfiguration.port = configuration.port
        transportConfiguration.maxMessageBytes = configuration.maxFrameBytes
        transportConfiguration.handshakeTimeoutSeconds = Int(configuration.handshakeTimeout.components.seconds)
        self.configuration = configuration
        self.logger = logger
        self.metrics = ServerMetrics()
        self.log =
            try storage
            ?? configuration.dataDirectory.map { directory throws(StorageError) in
                try RoomLog(directory: directory, sync: configuration.sync)
            }
        self.shared = log as? any SharedRoomStorage
        self.transport = try WebSocketServer(configuration: transportConfiguration, delegate: bridge)
        bridge.attach(self)
        if let shared { Task { await self.listen(to: shared) } }
        logger.info(
            "listening",
            metadata: [
                "host": "\(configuration.host)", "port": "\(transport.port)", "app": "\(configuration.app.name)",
                "data": "\(shared != nil ? "shared" : configuration.dataDirectory ?? "memory")",
            ])
    }

    /// The port the server listens on (useful with port 0).
    public nonisolated var port: Int { transport.port }

    /// Closes every connection and stops the service thread; safe to call more than once.
    public nonisolated func shutdown() {
        stopped.store(true, ordering: .relaxed)
        transport.shutdown()
        // A write in flight finishes before the log closes.
        writer.sync {}
        log?.close()
    }

    // MARK: - Connections

    /// Why a handshake is refused, as the HTTP answer it gets; nil lets it proceed.
    func refusal(of request: UpgradeRequest) -> HTTPResponse? {
        guard request.path.hasPrefix(RoomName.pathPrefix) else {
            return HTTPResponse(status: 404, text: "no such endpoint: connect to /rooms/ROOM\n")
        }
        guard RoomName(path: request.path) != nil else {
            return HTTPResponse(status: 400, text: RoomName.rule + "\n")
        }
        if let refusal = SessionName.refusal(query: request.query) {
            return HTTPResponse(status: 400, text: refusal)
        }
        if let origin = request.header("origin"), !configuration.allowsOrigin(origin, host: request.header("host")) {
            let text = "origin \(origin) is not allowed: start the server with --allowed-origin \(origin)\n"
            return HTTPResponse(status: 403, text: text)
        }
        guard connectionCount < configuration.maxConnections else {
            let limit = configuration.maxConnections
            return HTTPResponse(status: 503, text: "the server is at its limit of \(limit) connections\n")
        }
        return nil
    }

    func open(_ connection: WebSocketConnection) {
        guard let roomName = RoomName(path: connection.path) else {
            connection.close(code: 1008, reason: "no such endpoint")
            return
        }
        guard let grant = admit(connection, to: roomName.value) else { return }
        if shared != nil {
            // The room, or the session's mark another server may have moved, is read off the loop; the client is not
            // read until it is in.
            awaitRoom(roomName.value, for: connection, grant: grant)
            return
        }
        guard let room = room(named: roomName.value) else {
            connection.close(code: 1011, reason: "the room cannot be loaded")
            return
        }
        join(connection, to: room, grant: grant)
    }

    /// Makes the client of `connection` a member of `room`: its snapshot (or resume), then the room's broadcasts.
    func join(_ connection: WebSocketConnection, to room: Room, grant: AccessGrant) {
        clientCount += 1
        // On shared storage the server's number makes the id distinct among every server's clients of the room.
        let client = shared.map { "c\(clientCount)-\($0.node)" } ?? "c\(clientCount)"
        let name = connection.query["name"].map { String($0.prefix(64)) } ?? client
        let session = Session(
            connection: connection, client: client, name: name, room: room, canWrite: grant.role == .write,
            rateLimit: configuration.rateLimit
        )
        connection.context = session
        connectionCount += 1
        metrics.connections.increment()

        if let since = connection.query["since"].flatMap(Int.init),
            room.isResumable(fromEpoch: connection.query["epoch"]), let missed = room.patches(after: since)
        {
            connection.send(room.resumeFrame(for: session, at: since))
            for patch in missed { connection.send(patch.frame) }
        } else {
            sendSnapshot(to: session, in: room)
        }
        room.join(session)
        room.follow(session)
        schedulePresence(in: room)
        logger.debug(
            "connection opened",
            metadata: [
                "room": "\(room.name)", "client": "\(client)", "name": "\(name)", "peer": "\(connection.peerAddress)",
            ])
    }

    func close(_ connection: WebSocketConnection) {
        guard let session = connection.context as? Session else { return }
        connection.context = nil
        connectionClosed(session)
    }

    func connectionClosed(_ session: Session) {
        let room = session.room
        room.leave(session)
        connectionCount -= 1
        metrics.connections.decrement()
        schedulePresence(in: room)
        roomBecameIdle(room)
        logger.debug(
            "connection closed",
            metadata: [
                "room": "\(room.name)", "client": "\(session.client)", "name": "\(session.name)",
                "peer": "\(session.connection.peerAddress)",
            ])
    }

    func fellBehind(_ connection: WebSocketConnection) {
        guard let session = connection.context as? Session else { return }
        session.fellBehind()
        metrics.droppedQueues.increment()
    }

    func drained(_ connection: WebSocketConnection) {
        guard let session = connection.context as? Session, session.drained() else { return }
        do {
            let room = session.room
            session.resynchronise(with: try room.snapshot(for: session), at: room.store.version)
            if room.follow(session) { sendPresence(to: session) }
            logger.info(
                "resynchronised a slow client",
                metadata: ["room": "\(room.name)", "client": "\(session.client)", "version": "\(room.store.version)"])
        } catch {
            logger.error("cannot encode room state", metadata: ["room": "\(session.room.name)", "error": "\(error)"])
        }
    }

    func receive(_ message: InboundMessage, from connection: WebSocketConnection) {
        guard let session = connection.context as? Session else { return }
        if let pause = session.limiter.take() { slowDown(session, for: pause) }
        switch message {
        case .tooLarge(let size):
            // Straight to the socket, ahead of replies still waiting for the log: the connection closes now.
            let error = ServerMessage.error(
                id: nil, code: "too_large",
                message: "a message of \(size) bytes or more is over the \(configuration.maxFrameBytes)-byte limit"
            )
            metrics.error("too_large")
            session.reply(OutboundFrame(text: error.serialized()))
            connection.close(code: 1009, reason: "message too large")
        case .binary:
            send(
                .error(id: nil, code: "bad_json", message: "binary frames are not accepted; send JSON text"),
                to: session)
        case .text(let bytes):
            handle(bytes, from: session)
        }
    }

    /// A sender over `--rate-limit` is not read for `pause`: TCP holds it back, and nothing it sent is dropped.
    private func slowDown(_ session: Session, for pause: Duration) {
        session.connection.pauseReceiving()
        metrics.throttled.increment()
        Task {
            try? await Task.sleep(for: pause)
            self.resumeReading(session)
        }
    }

    private func resumeReading(_ session: Session) {
        session.connection.resumeReceiving()
    }

    private func handle(_ bytes: [UInt8], from session: Session) {
        let json: JSON
        do {
            json = try JSON(parsing: bytes)
        } catch {
            send(.error(id: nil, code: "bad_json", message: "\(error)"), to: session)
            return
        }
        guard case .object = json else {
            send(.error(id: nil, code: "bad_json", message: "a message must be a JSON object"), to: session)
            return
        }
        let parsed: ClientRequest
        do {
            parsed = try ClientRequest(json: json)
        } catch {
            send(.error(id: ClientMessage.validID(in: json), code: error.code, message: error.message), to: session)
            return
        }
        let request = parsed.message
        switch request {
        case .history(let id, let limit):
            answerHistory(id: id, limit: limit, for: session)
        case .action, .undo, .redo, .revert:
            guard session.canWrite else {
                send(.error(id: request.id, code: "forbidden", message: "this token may only read"), to: session)
                return
            }
            if let shared {
                guard shared.isAvailable else {
                    send(.error(id: request.id, code: "unavailable", message: Self.unavailable), to: session)
                    return
                }
                // Applied in the room's next locked write, after what other servers committed before it.
                enqueue(.request(parsed, session), in: session.room)
                return
            }
            guard isNew(parsed, from: session) else { return }
            change(request, seq: parsed.seq, from: session)
        }
    }

    func change(_ request: ClientMessage, seq: Int?, from session: Session) {
        let started = ContinuousClock.now
        let room = session.room
        do {
            switch request {
            case .action(let id, let action):
                metrics.actions.increment()
                let outcome = try room.store.send(json: action)
                if let change = outcome.change {
                    publish(change, in: room, cause: Cause(change.kind, client: session.client, id: id, action: action))
                }
                acknowledge(id: id, version: room.store.version, seq: seq, to: session)
                run(outcome.effects, in: room)
            case .undo(let id), .redo(let id):
                let change: Change
                if case .undo = request { change = try room.store.undo() } else { change = try room.store.redo() }
                publish(change, in: room, cause: Cause(change.kind, client: session.client, id: id, action: nil))
                acknowledge(id: id, version: change.version, seq: seq, to: session)
            case .revert(let id, let version):
                revert(to: version, id: id, seq: seq, from: session)
            case .history:
                break
            }
        } catch {
            send(.error(id: request.id, code: error.code, message: error.message), to: session)
        }
        metrics.actionLatency.recordNanoseconds(Int64(started.duration(to: .now) / .nanoseconds(1)))
    }

    /// Sends `change` to everyone in `room`, the sender included: one encoding, the same bytes for all.
    ///
    /// With a data directory the patch waits until the change is in the log (see `commit`).
    func publish(_ change: Change, in room: Room, cause: Cause) {
        let message = ServerMessage.patch(
            version: change.version, ops: change.patch, cause: cause,
            undo: room.store.history.undoCount, redo: room.store.history.redoCount
        )
        let bytes = message.serialized()
        let patch = Room.LoggedPatch(version: change.version, cause: cause, frame: OutboundFrame(text: bytes))
        audit(change, in: room, cause: cause)
        commit(patch, in: room, message: bytes, inverse: change.inverse)
    }

    /// Puts a released patch on the wire, once, for every client following the room.
    func broadcast(_ patch: Room.LoggedPatch, in room: Room) {
        let joined = room.release(patch)
        metrics.patches.increment()
        let followers = room.stream.followerCount - joined.count
        metrics.deliveries.increment(by: Int64(followers))
        metrics.bytesQueued.increment(by: Int64(followers * patch.frame.byteCount))
        for session in joined { sendPresence(to: session) }
    }

    /// The room's current presence, to a client that follows the room again: what went out while it did not is
    /// lost to it.
    private func sendPresence(to session: Session) {
        session.connection.send(session.room.presenceFrame(limit: configuration.presenceLimit))
    }

    private func answerHistory(id: String?, limit: Int?, for session: Session) {
        let count = min(limit ?? configuration.historyLimit.default, configuration.historyLimit.max)
        let entries = session.room.log.suffix(count).map {
            ServerMessage.HistoryRecord(version: $0.version, cause: $0.cause)
        }
        send(.history(id: id, entries: entries), to: session)
    }

    /// Replies to one client, after every patch and reply that is still waiting for the log.
    func send(_ message: ServerMessage, to session: Session) {
        if case .error(_, let code, _) = message { metrics.error(code) }
        reply(OutboundFrame(text: message.serialized()), to: session)
    }

    private func sendSnapshot(to session: Session, in room: Room) {
        do {
            session.connection.send(try room.snapshot(for: session))
            session.syncedVersion = room.store.version
        } catch {
            logger.error("cannot encode room state", metadata: ["room": "\(room.name)", "error": "\(error)"])
            session.connection.close(code: 1011, reason: "room state cannot be encoded")
        }
    }

    /// The room, in memory, loaded from the log, or new; nil if its stored log cannot be read.
    func room(named name: String) -> Room? {
        if let room = rooms[name] { return room }
        guard let log else { return install(.none, as: name) }
        do {
            return install(try StoredRoomImage.read(room: name, from: log, configuration: configuration), as: name)
        } catch {
            logger.error("cannot load a room", metadata: ["room": "\(name)", "error": "\(error)"])
            return nil
        }
    }

    /// A room's broadcast stream: a client more than the queue limit behind it whose socket takes nothing for the
    /// stall timeout gets a fresh snapshot instead.
    func makeStream() -> BroadcastStream {
        BroadcastStream(
            server: transport, lagLimit: configuration.queueLimitBytes, stallLimit: configuration.stallTimeout)
    }

    // MARK: - Presence

    /// Sends one presence for every join and leave of a room since the last one.
    ///
    /// Presence lists the whole room, so its cost grows with the square of the room's size: it goes
    /// out at most once per `presenceInterval` for each 100 peers, however many join at once.
    func schedulePresence(in room: Room) {
        room.presenceDirty = true
        guard !room.presenceScheduled else { return }
        room.presenceScheduled = true
        let interval = configuration.presenceInterval * max(1, room.sessions.count / 100)
        let wait = room.lastPresence.map { interval - $0.duration(to: .now) } ?? .zero
        Task {
            if wait > .zero { try? await Task.sleep(for: wait) }
            self.flushPresence(in: room)
        }
    }

    private func flushPresence(in room: Room) {
        room.presenceScheduled = false
        guard room.presenceDirty else { return }
        room.presenceDirty = false
        room.lastPresence = .now
        room.stream.append(room.presenceFrame(limit: configuration.presenceLimit))
        if shared != nil { publishPeers(of: room) }
    }

    // MARK: - Effects

    /// Applies `.send` effects now and starts `.run` effects, whose actions come back through the loop.
    func run(_ effects: [RoomEffect], in room: Room) {
        for effect in effects {
            switch effect {
            case .send(let action):
                apply(action, in: room)
            case .run(let body):
                // The work runs on its own; whatever it sends comes back through the loop, to the room by name. The
                // room stays in memory until it ends.
                let name = room.name
                room.runningEffects += 1
                Task {
                    await body { action in await self.receiveEffect(action, inRoom: name) }
                    room.runningEffects -= 1
                    self.roomBecameIdle(room)
                }
            }
        }
    }

    private func receiveEffect(_ action: EffectAction, inRoom name: String) {
        guard let room = rooms[name] else { return }
        if shared != nil {
            enqueue(.effect(action), in: room)
        } else {
            apply(action, in: room)
        }
    }

    func apply(_ action: EffectAction, in room: Room) {
        do {
            let outcome = try room.store.send(effect: action)
            if let change = outcome.change {
                publish(change, in: room, cause: Cause(kind: .effect, action: action.json))
            }
            run(outcome.effects, in: room)
        } catch {
            logger.warning("an effect's action failed", metadata: ["room": "\(room.name)", "error": "\(error)"])
        }
    }

    // MARK: - HTTP

    func respond(to request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" else { return HTTPResponse(status: 405, text: "method not allowed\n") }
        switch request.path {
        case "/healthz":
            if let shared, !shared.isAvailable { return HTTPResponse(status: 503, text: Self.unavailable + "\n") }
            return HTTPResponse(status: 200, text: "ok")
        case "/metrics":
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: metrics.exposition())
        case "/lockstep.js":
            return WebAssets.javascriptClient
        default:
            if let page = pageResponse(to: request) { return page }
            if let deferred = deferredRead(request) { return deferred }
            if let answer = timeTravelResponse(to: request) { return answer }
            guard let name = RoomName(path: request.path) else { return HTTPResponse(status: 404, text: "not found\n") }
            if let refusal = refusal(for: request, room: name.value) { return refusal }
            guard let room = storedRoom(named: name.value) else {
                return HTTPResponse(status: 404, text: "no room named \(name.value)\n")
            }
            do {
                let body: JSON = [
                    "room": .string(room.name), "version": .int(room.store.version),
                    "state": try room.store.stateJSON(), "epoch": .string(room.epoch),
                ]
                return HTTPResponse(status: 200, contentType: "application/json", body: body.serialized())
            } catch {
                return HTTPResponse(status: 500, text: "\(error)\n")
            }
        }
    }
}
