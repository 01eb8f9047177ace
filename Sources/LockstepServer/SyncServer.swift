import CoreMetrics
import FoundationEssentials
import Synchronization
import LockstepCore
import LockstepStorage
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
/// try await server.run()  // serves until SIGINT or SIGTERM, then drains
/// ```
public actor SyncServer {
    /// What the server was started with.
    public nonisolated let configuration: ServerConfiguration
    /// Idle limits, presence intervals and retries run on it.
    nonisolated let clock: ServerClock
    nonisolated let transport: WebSocketServer
    nonisolated let metrics: ServerMetrics
    /// Where rooms are kept, closed at shutdown; nil in memory.
    private nonisolated let storage: (any RoomStorage)?
    /// The parts of rooms only their owners see: the app's and the configuration's.
    nonisolated let privateParts: PrivateParts
    /// The server's settings a room's turn follows.
    let turnRules: RoomEngine.Rules
    /// The path of every change to storage and the wire: chosen once, here, for the storage.
    let pipeline: any CommitPipeline
    /// Rooms being read from storage, with everyone else asking for one meanwhile: they wait for the same read.
    var reads: [String: [CheckedContinuation<StorageError?, Never>]] = [:]
    let logger: Logger
    nonisolated let auditTrail: AuditTrail
    var rooms: [String: Room] = [:]
    private var clientCount = 0
    private var connectionCount = 0
    /// A pass returning freed memory to the system is due (see `evict`).
    var trimScheduled = false
    /// Names this run of the server, so a client without a session is a different author from any client of an
    /// earlier run or another server that got the same client id.
    nonisolated let runID = Room.makeEpoch()
    /// Set by ``drain()``: health checks and handshakes get 503, and nothing more is read from any client.
    private(set) var isDraining = false
    /// Change requests waiting for stored history before they reach the pipeline (a revert past memory); a drain
    /// waits for them too.
    var requestsBeingRead = 0
    /// Change requests so far that came without a connection (HTTP, Swift): each without a session is its own author.
    var requestsWithoutConnection = 0
    /// Consumers of rooms' changes so far (``changes(of:bufferingLimit:)``), numbering them.
    var listenerCount = 0
    /// The pending timers this server arms, and what becomes of them.
    var timers = TimerSchedule()
    /// The wait for the soonest pending timer, as `timers` armed it.
    var timerWait: Task<Void, Never>?
    /// When the next out-of-descriptors warning is due (see `descriptorsRanOut`).
    var descriptorWarnings: DescriptorWarnings
    /// Set by `shutdown`: late timers find the log closed and do nothing.
    private nonisolated let stopped = Atomic(false)
    nonisolated var isStopped: Bool { stopped.load(ordering: .relaxed) }

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        transport.loop.asUnownedSerialExecutor()
    }

    /// Starts listening at once; throws a ``ServerError`` if the port cannot be listened on or the data directory
    /// used (an ``AccessError`` for private parts without tokens). ``run()`` then serves until SIGINT or SIGTERM.
    ///
    /// Rooms go to `storage` (memory when not given: see ``ServerStorage``). `logger` defaults to swift-log's: lines
    /// of level info and above, on stderr.
    public init(
        configuration: ServerConfiguration, storage: ServerStorage = .memory, clock: ServerClock = .continuous,
        logger: Logger = Logger(label: "lockstep")
    ) throws {
        let bridge = TransportBridge()
        var transportConfiguration = WebSocketServer.Configuration()
        transportConfiguration.host = configuration.host
        transportConfiguration.port = configuration.port
        transportConfiguration.maxMessageBytes = configuration.maxFrameBytes
        transportConfiguration.receiveBufferBytes = configuration.receiveBufferBytes
        transportConfiguration.eventLoop = configuration.eventLoop
        transportConfiguration.gatherInterval = configuration.gatherInterval
        transportConfiguration.handshakeTimeoutSeconds = Int(configuration.handshakeTimeout.components.seconds)
        transportConfiguration.pingIntervalSeconds = Int(configuration.pingInterval.components.seconds)
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            transportConfiguration.tls = TLSFiles(certificatePath: certificate, privateKeyPath: key)
        }
        transportConfiguration.compression = configuration.compression
        transportConfiguration.compressionMinimumBytes = configuration.compressionMinimumBytes
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        descriptorWarnings = DescriptorWarnings(interval: configuration.descriptorWarningInterval)
        auditTrail = AuditTrail(logger: logger, limitBytes: configuration.auditLimitBytes)
        privateParts = configuration.privateParts.union(configuration.app.privateParts)
        turnRules = RoomEngine.Rules(
            guarded: privateParts, sessionWrites: configuration.sessionWrites, maxTimers: configuration.maxTimers)
        if !privateParts.isEmpty, configuration.tokens == nil {
            storage.closable?.close()
            throw configuration.privateParts.isEmpty
                ? AccessError.appPrivatePartsWithoutTokens(app: configuration.app.name)
                : AccessError.privatePartsWithoutTokens
        }
        self.metrics = ServerMetrics()
        pipeline = storage.makePipeline()
        self.storage = storage.closable
        do throws(TransportError) {
            self.transport = try WebSocketServer(configuration: transportConfiguration, delegate: bridge)
        } catch {
            storage.closable?.close()
            throw ServerError(error, host: configuration.host, port: configuration.port)
        }
        bridge.attach(self)
        Task { await self.startPipeline() }
        logger.info(
            "listening",
            metadata: [
                "host": "\(configuration.host)", "port": "\(transport.port)", "app": "\(configuration.app.name)",
                "data": "\(storage.label)",
            ])
        logDescriptorLimit()
    }

    private func startPipeline() {
        pipeline.start(server: self)
        Task {
            await loadTimers()
            pollTimers()
        }
    }

    /// The port the server listens on (useful with port 0).
    public nonisolated var port: Int { transport.port }

    /// Starts the drain: from now on health checks and handshakes get 503 and no client is read from. Returns false
    /// when a drain had already started.
    func beginDrain() -> Bool {
        guard !isDraining else { return false }
        isDraining = true
        return true
    }

    /// Closes every connection and stops the service thread; safe to call more than once. ``drain()`` first answers
    /// what was read and says goodbye (1001).
    public nonisolated func shutdown() {
        stopped.store(true, ordering: .relaxed)
        transport.shutdown()
        // A write in flight finishes before the log closes.
        storage?.close()
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
        if let path = request.query["path"], let refusal = pathRefusal(path) { return refusal }
        if let origin = request.header("origin"), !configuration.allowsOrigin(origin, host: request.header("host")) {
            return HTTPResponse(status: 403, text: ServerConfiguration.originRefusal(origin) + "\n")
        }
        guard !isDraining else {
            return HTTPResponse(status: 503, text: Self.drainingNotice + "\n")
        }
        guard connectionCount < connectionLimit else {
            let limit = connectionLimit
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
        // The client is not read until it is in the room, which may have to be read or brought up to date first.
        connection.pauseReceiving()
        Task { await self.enter(connection, room: roomName.value, grant: grant) }
    }

    /// What `connection` may do in `room`, or nil after refusing it: one `unauthorized` error, then
    /// close 1008. Runs before the connection joins the room, so a refused client sees no state.
    func admit(_ connection: WebSocketConnection, to room: String) -> AccessGrant? {
        guard let tokens = configuration.tokens else { return AccessGrant(room: "*", role: .write) }
        let token = connection.query["token"] ?? TokenAuthority.bearerToken(in: connection.header("authorization"))
        do {
            return try tokens.authorize(token, room: room)
        } catch {
            metrics.error(error.code)
            logger.info(
                "refused a connection",
                metadata: [
                    "room": "\(room)", "peer": "\(connection.peerAddress)", "reason": "\(error.message)",
                ])
            let refusal = ServerMessage.error(id: nil, code: error.code, message: error.message)
            connection.send(OutboundFrame(text: refusal.serialized()))
            connection.close(code: 1008, reason: "unauthorized")
            return nil
        }
    }

    /// Makes the client of `connection` a member of `room`: its snapshot (or resume), then the room's broadcasts.
    func join(_ connection: WebSocketConnection, to room: Room, grant: AccessGrant) {
        room.isProvisional = false
        clientCount += 1
        let client = pipeline.clientID(clientCount)
        let name = connection.query["name"].map { String($0.prefix(64)) } ?? client
        let session = Session(
            connection: connection, client: client, name: name, room: room,
            grant: configuration.tokens == nil ? nil : grant,
            limiter: RateLimiter(perSecond: configuration.rateLimit, now: clock.now),
            redacting: !privateParts.isEmpty
        )
        connection.context = session
        connectionCount += 1
        metrics.connections.increment()

        session.sight.open(in: room, make: makeStream)
        if let since = connection.query["since"].flatMap(Int.init),
            room.isResumable(fromEpoch: connection.query["epoch"]),
            let missed = room.engine.missedPatches(after: since, seenBy: session.sight)
        {
            connection.send(room.resumeFrame(for: session, at: since))
            for frame in missed { connection.send(frame) }
        } else {
            sendSnapshot(to: session, in: room)
        }
        room.join(session)
        room.follow(session)
        schedulePresence(in: room)
        if let joined = configuration.app.membership.joined, let action = joined(session.sender(run: runID)) {
            pipeline.submit(.membership(action, session.sender(run: runID), .join), to: room, server: self)
        }
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
        if let left = configuration.app.membership.left, let action = left(session.sender(run: runID)) {
            pipeline.submit(.membership(action, session.sender(run: runID), .leave), to: room, server: self)
        }
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
            try room.synchronise(session)
            if room.follow(session) { sendPresence(to: session) }
            logger.info(
                "resynchronised a slow client",
                metadata: [
                    "room": "\(room.name)", "client": "\(session.client)", "version": "\(room.engine.store.version)",
                ])
        } catch {
            logger.error("cannot encode room state", metadata: ["room": "\(session.room.name)", "error": "\(error)"])
        }
    }

    func receive(_ message: InboundMessage, from connection: WebSocketConnection) {
        guard let session = connection.context as? Session else { return }
        if let pause = session.limiter.take(now: clock.now) { slowDown(session, for: pause) }
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
        let until = clock.now + pause
        Task {
            try? await clock.sleep(until: until)
            self.resumeReading(session)
        }
    }

    private func resumeReading(_ session: Session) {
        resumeReceiving(session.connection)
    }

    /// Reads `connection` again after a pause, unless the server is draining: then nothing more is read.
    func resumeReceiving(_ connection: WebSocketConnection) {
        guard !isDraining else { return }
        connection.resumeReceiving()
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
        case .presence(let id, let state):
            setPresence(state, id: id, of: session)
        case .action, .undo, .redo, .revert, .cancel:
            guard session.canWrite else {
                send(.error(id: request.id, code: "forbidden", message: "this token may only read"), to: session)
                return
            }
            if let refusal = configuration.historyRefusal(of: request, role: session.role) {
                send(.error(id: request.id, code: "forbidden", message: refusal), to: session)
                return
            }
            submit(parsed, from: session)
        }
    }

    /// Hands a change request to the pipeline; a revert further back than memory holds first reads what it needs.
    /// Even while the storage is unavailable: the write reconnects, and only a write that fails is refused.
    func submit(_ request: ClientRequest, from requester: any Requester) {
        if case .revert(_, let version) = request.message, requester.room.engine.needsStoredHistory(toReach: version) {
            return revertFromStorage(request, from: requester, to: version)
        }
        pipeline.submit(.request(request, requester), to: requester.room, server: self)
    }

    /// Applies what the pipeline hands over, in its turn, and carries out what the room's engine decides.
    func apply(_ input: RoomInput, in room: Room) {
        let started = ContinuousClock.now
        defer { metrics.actionLatency.recordNanoseconds(Int64(started.duration(to: .now) / .nanoseconds(1))) }
        let taken: RoomEngine.Input
        switch input {
        case .request(let request, let requester, let older):
            taken = .request(request, from: source(of: requester), older: older)
        case .effect(let action, let sender): taken = .effect(action, sender)
        case .timer(let timer): taken = .timer(timer)
        case .membership(let action, let sender, let kind): taken = .membership(action, sender, kind)
        }
        let time = RoomEngine.Time(
            milliseconds: clock.epochMilliseconds, markSeconds: Date().timeIntervalSince1970)
        let turn = room.engine.take(taken, at: time, epoch: room.epoch, rules: turnRules, timers: &timers)
        if turn.actions > 0 { metrics.actions.increment(by: Int64(turn.actions)) }
        for output in turn.outputs { carryOut(output, of: input, in: room) }
    }

    /// Who a requester is to its room's engine.
    private func source(of requester: any Requester) -> RoomEngine.Source {
        RoomEngine.Source(
            client: requester.client, sender: requester.sender(run: runID), subject: requester.subject,
            session: requester.sessionName?.value, idempotency: requester.idempotency)
    }

    /// What a room's engine decided, carried out: a change to the pipeline (stored, then released), a mark or timers
    /// to store with it, the answer to the input's requester, the timer wait moved, an effect's work started.
    private func carryOut(_ output: RoomEngine.Output, of input: RoomInput, in room: Room) {
        switch output {
        case .commit(let commit):
            auditTrail.record(commit.change, in: room.name, cause: commit.encoded.cause)
            pipeline.commit(
                commit.patch, message: commit.encoded.bytes, record: commit.encoded.record, in: room, server: self)
        case .mark(let mark):
            pipeline.markMoved(mark, in: room, server: self)
        case .timers(let scheduled, let gone):
            pipeline.timersChanged(scheduled: scheduled, gone: gone, in: room, server: self)
        case .wait(let wait):
            perform(wait)
        case .answer(let answer):
            guard case .request(_, let requester, _) = input else { return }
            reply(answer, to: requester)
        case .run(let work, let sender):
            start(work, in: room, sender: sender)
        case .notice(let level, let what, let reason, let client):
            var metadata: Logger.Metadata = ["room": "\(room.name)", "reason": "\(reason)"]
            if let client { metadata["client"] = "\(client)" }
            logger.log(level: level, "\(what)", metadata: metadata)
        }
    }

    /// Puts a released patch on the wire, once, for every client following the room.
    func broadcast(_ patch: Room.LoggedPatch, in room: Room) {
        let joined = room.release(patch)
        for follower in room.followers { follower.release(patch) }
        tellListeners(patch, in: room)
        metrics.patches.increment()
        var followers = room.stream.followerCount
        var bytes = followers * patch.frame.byteCount
        for (view, frames) in patch.views {
            guard let delivered = room.viewStreams[view]?.deliveries(of: frames) else { continue }
            followers += delivered.count
            bytes += delivered.bytes
        }
        // Clients that just caught up were sent this patch already, as part of their join.
        followers -= joined.count
        metrics.deliveries.increment(by: Int64(followers))
        metrics.bytesQueued.increment(by: Int64(max(0, bytes)))
        for session in joined { sendPresence(to: session) }
    }

    private func answerHistory(id: String?, limit: Int?, for session: Session) {
        let count = min(limit ?? configuration.historyLimit.default, configuration.historyLimit.max)
        let entries = session.room.engine.released.recent.suffix(count).map { patch in
            ServerMessage.HistoryRecord(version: patch.version, cause: session.sight.cause(of: patch))
        }
        send(.history(id: id, entries: entries), to: session)
    }

    /// Queues an answer behind every patch and answer its room still holds back, so order is kept.
    func reply(_ answer: RequestAnswer, to requester: any Requester) {
        if case .error(_, let code, _) = answer { metrics.error(code) }
        pipeline.reply(answer, to: requester, server: self)
    }

    /// Replies to one client, after every patch and reply that is still waiting for the log.
    func send(_ message: ServerMessage, to session: Session) {
        if case .error(let id, let code, let message) = message {
            return reply(.error(id: id, code: code, message: message), to: session)
        }
        reply(.message(message), to: session)
    }

    private func sendSnapshot(to session: Session, in room: Room) {
        do {
            try room.synchronise(session)
        } catch {
            logger.error("cannot encode room state", metadata: ["room": "\(room.name)", "error": "\(error)"])
            session.connection.close(code: 1011, reason: "room state cannot be encoded")
        }
    }

    /// A room's broadcast stream: a client more than the queue limit behind it whose socket takes nothing for the
    /// stall timeout gets a fresh snapshot instead.
    func makeStream() -> BroadcastStream {
        BroadcastStream(
            server: transport, lagLimit: configuration.queueLimitBytes, stallLimit: configuration.stallTimeout,
            elapsed: { [clock] in clock.now })
    }

    // MARK: - Effects

    /// Starts an effect's work off the loop: whatever it sends comes back through the loop, to the room by name, as
    /// `sender`'s. The room stays in memory until the work ends.
    private func start(_ work: @escaping RoomEngine.Work, in room: Room, sender: Sender?) {
        let name = room.name
        room.runningEffects += 1
        Task {
            await work { action in await self.receiveEffect(action, inRoom: name, sender: sender) }
            room.runningEffects -= 1
            self.roomBecameIdle(room)
        }
    }

    private func receiveEffect(_ action: EffectAction, inRoom name: String, sender: Sender?) {
        guard let room = rooms[name] else { return }
        pipeline.submit(.effect(action, sender), to: room, server: self)
    }

    // MARK: - HTTP

    func respond(to request: HTTPRequest) -> HTTPResponse {
        // A HEAD is answered as its GET, without the body (the transport leaves it out).
        let isRead = request.method == "GET" || request.method == "HEAD"
        if !isRead, request.path.hasPrefix(RoomName.pathPrefix) {
            guard !request.path.dropFirst(RoomName.pathPrefix.count).contains("/") else {
                return respondToReadOnly(request)
            }
            guard let room = RoomName(path: request.path) else {
                let refusal = RequestAnswer.error(id: nil, code: "bad_message", message: RoomName.rule)
                return HTTPRequester.response(to: refusal, room: "", status: 400)
            }
            return respond(to: request, room: room.value)
        }
        guard isRead else {
            return HTTPResponse(status: 405, text: "method not allowed\n").adding(["Allow": "GET, HEAD"])
        }
        switch request.path {
        case "/healthz":
            guard !isDraining else { return HTTPResponse(status: 503, text: Self.drainingNotice + "\n") }
            guard pipeline.isAvailable else {
                return HTTPResponse(status: 503, text: RequestAnswer.unavailable + "\n")
            }
            return HTTPResponse(status: 200, text: "ok")
        case "/metrics":
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: metrics.exposition())
        case "/lockstep.js":
            return WebAssets.javascriptClient
        case "/lockstep.d.ts":
            return WebAssets.typeDeclarations
        default:
            if let page = InspectorPages.response(to: request, rooms: rooms.values) { return page }
            // A page of an allowed origin reads every answer, refusals included.
            let cors = configuration.corsHeaders(for: request)
            if request.path.hasSuffix("/timers"), let room = RoomName(path: String(request.path.dropLast(7))) {
                if let refusal = configuration.readRefusal(of: request, room: room.value) {
                    return refusal.adding(cors)
                }
                let promise = HTTPPromise()
                Task { promise.complete(with: await self.timersResponse(room: room.value).adding(cors)) }
                return .deferred(promise)
            }
            guard var read = RoomRead(request) else { return HTTPResponse(status: 404, text: "not found\n") }
            if let refusal = configuration.readRefusal(of: request, room: read.room) { return refusal.adding(cors) }
            if let path = read.path, let refusal = pathRefusal(path) { return refusal.adding(cors) }
            read.sight = roomSight(of: request, path: read.path, parts: privateParts, tokens: configuration.tokens)
            // Answered once the room is read (when not in memory) and, for a past version, its history.
            let promise = HTTPPromise()
            Task { promise.complete(with: await self.answer(read).adding(cors)) }
            return .deferred(promise)
        }
    }

    /// The room named `name` for an HTTP read, read into memory when it is not there; or the answer instead: `404`
    /// for a room no one has used, `503` when storage cannot be read.
    func roomToRead(_ name: String) async -> RoomLookup {
        switch await room(named: name, creating: false) {
        case .success(let found?) where !(found.isProvisional && found.engine.store.version == 0):
            .found(found)
        case .success:
            .answered(HTTPResponse(status: 404, text: "no room named \(name)\n"))
        case .failure(let error):
            .answered(HTTPResponse(status: 503, text: "the room cannot be read: \(error)\n"))
        }
    }

    /// What `roomToRead(_:)` found.
    enum RoomLookup {
        case found(Room)
        case answered(HTTPResponse)
    }

    /// The answer to `GET /rooms/ROOM` and its `?version=` and `/log` forms.
    private func answer(_ read: RoomRead) async -> HTTPResponse {
        let room: Room
        switch await roomToRead(read.room) {
        case .found(let found): room = found
        case .answered(let answer): return answer
        }
        // A read after an ack through another server sees that change: the room first catches up with the log.
        guard await pipeline.prepareJoin(of: room, session: nil, server: self) else {
            return HTTPResponse(status: 503, text: "the room cannot be read: the database did not answer in time\n")
        }
        if let answer = await timeTravelResponse(to: read, in: room) { return answer }
        do {
            let (version, state) = try room.engine.releasedState()
            let body = read.body(
                room: room.name, version: version, state: state, epoch: room.epoch, parts: privateParts)
            return HTTPResponse(status: 200, contentType: "application/json", body: body.serialized())
        } catch {
            return HTTPResponse(status: 500, text: "\(error)\n")
        }
    }
}
