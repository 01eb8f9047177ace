public import LockstepCore
public import LockstepJSON
public import LockstepTransport
public import Logging
import Synchronization

/// A live mirror of one server room: applies the server's snapshot and patches in version order, sends requests,
/// and keeps itself in sync across drops and server restarts, so an app only reads state and sends actions.
///
/// ```swift
/// let room = try RoomClient(url: "ws://127.0.0.1:8080/rooms/demo", name: "alice")
/// try await room.connect()
/// let version = try await room.send(action: ["type": "increment"])
/// for await update in room.updates { print(update.version, update.state) }
/// ```
///
/// With `path:` (a JSON Pointer) the client follows part of the room: `state` is the value there (`.null` while it
/// does not exist), patches are relative to it and arrive only when it changes, so versions skip the changes it did
/// not see; requests still name whole-room paths. A client whose URL carries a token accepts skipped versions too,
/// since a room with private parts sends it nothing for changes it may not see.
///
/// Reconnections resume with `since=` the mirror's version and `epoch=` its history; a version gap or a patch that
/// does not apply makes the client reconnect for a fresh snapshot rather than show a wrong state. A server that is
/// going away (close code 1001: it drains on SIGTERM) has answered everything it read, so the client reconnects at
/// once, without backing off; given several addresses of servers sharing the room (`urls:`), it moves to the next
/// one then, and after every failed attempt.
///
/// Every change request (`send`, `undo`, `redo`, `revert`, `mine` or not, timers scheduled or cancelled) goes
/// through an outbox and is applied exactly once: the client names a session (`session=`) and numbers each request (`seq`); while disconnected,
/// requests wait in the outbox (at most `outboxLimit`); on reconnection the server says which it already applied
/// (the session's mark), those are answered and the rest are sent again, in order. A request returns once the
/// server acknowledged it. One answered `unavailable` (the server could not store it) waits in the outbox too and
/// goes out again, with its `seq`, after the reconnection policy's delay: sent as a new request it could be applied
/// twice, since an earlier connection may have delivered it to another server that did store it.
///
/// With a ``KeepDirectory`` (`keep:`) the session, the outbox and the last confirmed state outlive the process: a
/// client started again with the same directory shows its kept state at once (``connect()`` returns before any
/// network is there), resumes with `since=` and the same `seq` numbers, and sends what was not answered once its
/// server answers, so each request is applied once however many times the app was restarted in between.
///
/// ``mirror`` shows state, version, status and peers synchronously and is `Observable`; it changes on the isolation
/// given as `isolation:` (the main actor for a UI).
public actor RoomClient {
    /// Every change to the mirror, in order, each with the state right after it. One consumer. Nothing is lost from
    /// the moment it is first read (its buffer has no bound); before that the client keeps only the newest
    /// ``unreadUpdatesLimit``, which it starts with, so reading it right after `connect()` misses none, and an app
    /// that shows only ``mirror`` does not keep every change. Finishes after `close()`.
    public nonisolated var updates: AsyncStream<RoomUpdate> { backlog.stream }

    /// Most updates kept before ``updates`` is first read; older ones are dropped.
    public static let unreadUpdatesLimit = 256

    /// The room's name, from the URL.
    public nonisolated let room: String
    /// The part of the room this client follows; `.root` for all of it.
    public nonisolated let path: JSONPointer
    /// The mirrored state (the value at `path`); `.null` before the first snapshot.
    public private(set) var state: JSON = .null {
        didSet { stateGeneration += 1 }
    }
    /// The version of `state`.
    public private(set) var version = 0
    /// Who is in the room, in join order, each with its presence state once it has one.
    public private(set) var peers: [Peer] = []
    /// What this client says it is doing, as last given to ``setPresence(_:)``; nil for nothing.
    public private(set) var presenceState: JSON?
    /// Shortest time between two presence states this client sends, as the server's default `--presence-interval`:
    /// states set in between are merged, and the latest goes out.
    public static let presenceInterval = Duration.milliseconds(50)
    /// How many changes the room can undo now.
    public private(set) var undoCount = 0
    /// How many changes the room can redo now.
    public private(set) var redoCount = 0
    /// This connection's id on the server; it changes with each reconnection.
    public private(set) var you: String?
    /// Where the connection stands.
    public private(set) var status: ConnectionStatus = .connecting(failures: 0)
    /// The session this client's requests belong to, kept across reconnections.
    public nonisolated let session: String
    /// Who the server takes this client's requests to be: its name, its session, and the subject and role its token
    /// claims. ``SharedStore`` predicts with it; `client` is empty, since the server names each connection anew.
    public nonisolated let sender: Sender
    /// The room's history the mirror follows (`epoch`); nil before the first sync.
    public private(set) var epoch: String?
    /// Change requests not yet answered (queued while disconnected, or in flight, or kept from an earlier run).
    public var pendingCount: Int { outbox.count }
    /// The client's state, version, status and peers, read synchronously and observable; see ``RoomMirror``.
    public nonisolated let mirror: RoomMirror
    /// Whether the mirror holds a state the server sent (in this run, or kept from an earlier one).
    public var hasState: Bool { holdsState }
    /// The actions not yet in the mirror, in order: apply them over `state` to predict the room's next state.
    public var pendingActions: [JSON] { outbox.predictedActions }

    /// The addresses of servers sharing the room, tried in turn; `current` is the one in use.
    private let urls: [RoomURL]
    private var current = 0
    private var url: RoomURL { urls[current] }
    private let policy: ReconnectPolicy
    /// Requests answered `unavailable` in a row, for the delay before they go out again, and the wait for it.
    private var refusals = 0
    private var resendTask: Task<Void, Never>?
    private let order: VersionOrder
    private let transport: WebSocketClient
    private let ownsTransport: Bool
    private nonisolated let backlog = UpdateBacklog(limit: RoomClient.unreadUpdatesLimit)
    private var socket: WebSocket?
    /// The connection ``dropConnectionForTesting()`` dropped: what it still delivers is ignored, as after a real cut.
    private var droppedSocket: WebSocket?
    /// True once the current connection delivered a snapshot or a valid resume: patches and requests may flow.
    private var synced = false
    /// True once the mirror holds some version of the state, so a reconnection can resume.
    private var holdsState = false
    /// Set when the mirror cannot follow; the connection is dropped and the next one asks for a snapshot.
    private var resyncReason: String?
    /// `history` requests waiting for their answer (they are not queued: they need a live connection).
    private var pending: [String: CheckedContinuation<Result<[ServerMessage.HistoryRecord], RoomClientError>, Never>] =
        [:]
    private var outbox: Outbox
    /// Every id the server gave this client's connections: a patch caused by one of them may be ours.
    private var yous: Set<String> = []
    /// The id of the `history` request that tells when requests the mark covered are in the mirror, after a resume.
    private var barrier: String?
    private var nextRequest = 1
    /// Starts every request id, so the ids in patches' causes are this client's alone (its session stays private).
    private let idPrefix = String(UInt32.random(in: .min ... .max), radix: 36) + "-"

    /// Assigned with every new `state`, so observers notice a change without comparing states.
    private var stateGeneration = 0
    private let mirrorFeed: UpdateFeed<RoomMirror.Values>
    /// Internal observers (a typed store), called on the actor with every change.
    private let watchers = Mutex<[@Sendable (RoomMirror.Values) -> Void]>([])
    private let logger: Logger
    /// Writes the kept file; nil without a keep directory, and once closed.
    private var keeper: RoomKeeper?
    /// The state as last written to the kept file, serialized, with what it goes with.
    private var kept = (generation: -1, bytes: Array("null".utf8), version: 0, epoch: String?.none, synced: false)
    /// The epoch of a kept file's state, checked against the server's at the first snapshot.
    private var keptEpochToCheck: String?
    private var saveTask: Task<Void, Never>?

    /// ``presenceState`` has not reached the server on this connection yet.
    private var presenceOwed = false
    /// When the last presence state was sent, and the wait for the next one to be due.
    private var lastPresenceSent: ContinuousClock.Instant?
    private var presenceTimer: Task<Void, Never>?

    /// The last error the server sent without a request id on the current connection before its first snapshot: why
    /// it refuses the connection, when it then closes it.
    private var refusal: String?

    private var runTask: Task<Void, Never>?
    private var connectWaiter: CheckedContinuation<Result<Void, RoomClientError>, Never>?
    private var isClosed = false

    /// Prepares a client for `url` (`ws://HOST:PORT/rooms/ROOM`, or `wss://` over TLS); nothing connects until
    /// ``connect()``. A `wss://` server's certificate must be trusted by the system (OpenSSL also reads
    /// `SSL_CERT_FILE`), or come from the `trustedCertificatesFile` of the `transport` given.
    ///
    /// - Parameters:
    ///   - url: the room's address on its server, `ws://HOST:PORT/rooms/ROOM` (or `wss://`).
    ///   - path: the part of the room to follow, a JSON Pointer (`/boards/7`); the whole room when `.root`. A
    ///     `path=` in the URL's query does the same.
    ///   - name: the display name peers see (the server uses the connection id when nil).
    ///   - session: the session name (1 to 64 of `A-Z a-z 0-9 . _ -`); a random one, kept for the client's lifetime,
    ///     when nil. Give the same one after an app restart to keep numbering where the server's mark is.
    ///   - outboxLimit: most change requests waiting for an answer at once (default 10 000).
    ///   - reconnect: how retries back off after a drop.
    ///   - transport: a shared libwebsockets client (many rooms, one thread); the client makes and owns one when nil.
    ///   - keep: where to keep the session, the outbox and the last confirmed state across restarts; with one, a
    ///     kept session is reused when `session` is nil, and the client works offline from its first start.
    ///   - isolation: where ``mirror`` changes (`MainActor.shared` for a UI); at once, on the client's actor, when nil.
    ///   - logger: where a kept file set aside, or one that cannot be written, is reported.
    public init(
        url: String, path: JSONPointer = .root, name: String? = nil, session: String? = nil,
        outboxLimit: Int = 10_000, reconnect: ReconnectPolicy = ReconnectPolicy(), transport: WebSocketClient? = nil,
        keep: KeepDirectory? = nil, isolation: (any Actor)? = nil, logger: Logger = Logger(label: "lockstep.client")
    ) throws(RoomClientError) {
        try self.init(
            urls: [url], path: path, name: name, session: session, outboxLimit: outboxLimit, reconnect: reconnect,
            transport: transport, keep: keep, isolation: isolation, logger: logger)
    }

    /// Prepares a client that follows the part of the room at `path`, JSON Pointer text (`"/boards/7"`); throws
    /// ``RoomClientError/invalidPath(_:)`` when it is not one. Other parameters as in the initializer that takes a
    /// `JSONPointer`.
    public init(
        url: String, path: String, name: String? = nil, session: String? = nil, outboxLimit: Int = 10_000,
        reconnect: ReconnectPolicy = ReconnectPolicy(), transport: WebSocketClient? = nil, keep: KeepDirectory? = nil,
        isolation: (any Actor)? = nil, logger: Logger = Logger(label: "lockstep.client")
    ) throws(RoomClientError) {
        try self.init(
            urls: [url], path: try Self.pointer(path), name: name, session: session, outboxLimit: outboxLimit,
            reconnect: reconnect, transport: transport, keep: keep, isolation: isolation, logger: logger)
    }

    /// `text` as a JSON Pointer, or ``RoomClientError/invalidPath(_:)``.
    public static func pointer(_ text: String) throws(RoomClientError) -> JSONPointer {
        do {
            return try JSONPointer(text)
        } catch {
            throw .invalidPath(text)
        }
    }

    /// Prepares a client for one room served by several servers (sharing a database): `urls` are its addresses on
    /// each, all naming the same room. The client starts with the first, and moves to the next after a failed
    /// attempt or when its server goes away (1001). Other parameters as in the initializer for one `url` that takes
    /// a `JSONPointer`.
    public init(
        urls: [String], path: JSONPointer = .root, name: String? = nil, session: String? = nil,
        outboxLimit: Int = 10_000, reconnect: ReconnectPolicy = ReconnectPolicy(), transport: WebSocketClient? = nil,
        keep: KeepDirectory? = nil, isolation: (any Actor)? = nil, logger: Logger = Logger(label: "lockstep.client")
    ) throws(RoomClientError) {
        if let session { try Self.check(session: session) }
        self.logger = logger
        outbox = Outbox(limit: max(outboxLimit, 1))
        var keptRoom: KeptRoom?
        if let keep, let first = urls.first {
            let target = try RoomURL(first, name: name, path: path)
            let keeper = try RoomKeeper(
                directory: keep, room: target.room, path: target.path.description, logger: logger)
            keptRoom = keeper.load(room: target.room, path: target.path.description, session: session)
            self.keeper = keeper
        }
        let session = session ?? keptRoom?.session ?? Self.randomSession()
        self.session = session
        var parsed: [RoomURL] = []
        for url in urls { parsed.append(try RoomURL(url, name: name, session: session, path: path)) }
        guard let first = parsed.first, parsed.allSatisfy({ $0.room == first.room && $0.path == first.path }) else {
            throw .invalidURL(urls.isEmpty ? "no address given" : "\(urls.joined(separator: " ")): not one room")
        }
        sender = first.sender(client: nil, name: name, session: session)
        self.urls = parsed
        room = first.room
        self.path = first.path
        order = VersionOrder(url: first)
        policy = reconnect
        if let transport {
            self.transport = transport
            ownsTransport = false
        } else {
            do {
                self.transport = try WebSocketClient()
            } catch {
                throw .connectionFailed("cannot start the WebSocket client: \(error)")
            }
            ownsTransport = true
        }
        var values = RoomMirror.Values()
        if let keptRoom {
            outbox.restore(keptRoom.outbox, nextSeq: keptRoom.nextSeq, keptVersion: keptRoom.version)
            if keptRoom.synced {
                state = keptRoom.state
                version = keptRoom.version
                epoch = keptRoom.epoch
                holdsState = true
                keptEpochToCheck = keptRoom.epoch
                values.state = state
                values.version = version
            }
            values.pendingCount = outbox.count
            values.pendingActions = outbox.predictedActions
        }
        let mirror = RoomMirror(values)
        self.mirror = mirror
        mirrorFeed = UpdateFeed(isolation: isolation)
        mirrorFeed.start { mirror.apply($0) }
    }

    /// Throws ``RoomClientError/invalidSession(_:)`` unless `session` is 1 to 64 of `A-Z a-z 0-9 . _ -`.
    private static func check(session: String) throws(RoomClientError) {
        guard (1...64).contains(session.utf8.count),
            session.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
        else { throw .invalidSession(session) }
    }

    /// Calls `watcher` on the actor with every change of the mirror (a typed store derives its own state from it).
    nonisolated func watch(_ watcher: @escaping @Sendable (RoomMirror.Values) -> Void) {
        watchers.withLock { $0.append(watcher) }
    }

    /// Opens the first connection and returns once the first snapshot is mirrored; from then on the client
    /// reconnects by itself until ``close()``. Throws `connectionFailed` (and closes) if that first connection fails.
    ///
    /// With a keep directory the client works offline: this returns at once when a kept state shows, or after the
    /// first attempt otherwise, and a failed attempt does not close the client; it keeps trying while requests wait
    /// in the kept outbox.
    public func connect() async throws(RoomClientError) {
        guard !isClosed else { throw .closed }
        guard runTask == nil else { return }
        if keeper != nil, holdsState {
            runTask = Task { await self.run() }
            return
        }
        let result = await withCheckedContinuation { continuation in
            connectWaiter = continuation
            runTask = Task { await self.run() }
        }
        try result.get()
    }

    /// Ends the connection and the update stream; requests still waiting fail with ``RoomClientError/closed``. With
    /// a keep directory they stay kept: the next client started with it sends them.
    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        saveTask?.cancel()
        presenceTimer?.cancel()
        resendTask?.cancel()
        socket?.close()
        runTask?.cancel()
        await runTask?.value
        saveKept(refreshingState: true)
        keeper = nil
        failPending(.closed)
        failOutbox(.closed)
        finishConnect(.failure(.closed))
        setStatus(.closed)
        backlog.finish()
        mirrorFeed.finish()
        if ownsTransport { transport.shutdown() }
    }

    // MARK: - Requests

    /// Sends an action; returns the version the room reached (the mirror already shows it when this returns, since
    /// the server sends the patch before the ack; a view shows it if it touched the view). An action that changes
    /// nothing returns the current version. While disconnected it waits in the outbox and goes out on reconnection.
    @discardableResult
    public func send(action: JSON) async throws(RoomClientError) -> Int {
        try await change { .action(id: $0, action: action) }
    }

    /// Reverts the room's most recent change, whoever made it; returns the version of the reverting patch.
    /// With `mine`, takes back this client's own most recent change still in effect instead, leaving others' later
    /// changes in place (the server refuses with `conflict` when it cannot, `nothing_to_undo` when there is none).
    /// "This client" is its session, so changes made before a reconnection count. Undo runs on the server only:
    /// nothing is predicted locally.
    @discardableResult
    public func undo(mine: Bool = false) async throws(RoomClientError) -> Int {
        try await change { .undo(id: $0, mine: mine) }
    }

    /// Re-applies the most recently undone change; with `mine`, the latest of this client's changes its own
    /// `undo(mine: true)` took back. Returns the version of its patch. Server-side only, like undo.
    @discardableResult
    public func redo(mine: Bool = false) async throws(RoomClientError) -> Int {
        try await change { .redo(id: $0, mine: mine) }
    }

    /// Puts the room back to the state it had at version `target`, as one new change that undo can revert; returns
    /// the version the room reached (the current one when that state is the current state).
    @discardableResult
    public func revert(to target: Int) async throws(RoomClientError) -> Int {
        try await change { .revert(id: $0, to: target) }
    }

    /// Has the server apply `action` after `delay` (0 to 7 days), as this client's change, even if no client is
    /// connected then; returns once the server stored the timer, with its name and when it is due. Nothing changes
    /// until it fires: the action is not predicted, and its patch arrives like any other (its cause's kind is
    /// `timer`). `timer` names it (1 to 64 of `A-Z a-z 0-9 . _ -`): scheduling a pending name again replaces that
    /// timer, whoever scheduled it; without one the client picks a fresh name. Goes through the outbox like
    /// ``send(action:)``, so a timer is scheduled once across drops; its answer after a drop may lack `due`.
    ///
    /// ```swift
    /// try await room.send(action: ["type": "timeout"], after: .seconds(30), timer: "turn")
    /// ```
    @discardableResult
    public func send(action: JSON, after delay: Duration, timer: String? = nil) async throws(RoomClientError)
        -> ScheduledTimer
    {
        let scheduling = try Self.timerRequest(after: delay, timer: timer ?? Self.randomTimerName())
        switch try await request({ .action(id: $0, action: action) }, timer: scheduling) {
        case .scheduled(let timer, let due): return ScheduledTimer(name: timer, dueMilliseconds: due)
        case .applied: return ScheduledTimer(name: scheduling.name ?? "", due: nil)
        }
    }

    /// Cancels the room's pending timer `timer`, whoever scheduled it; returns once the server took it away (also
    /// when no timer of that name was pending, or it already fired). Goes through the outbox like a send.
    public func cancel(timer: String) async throws(RoomClientError) {
        guard TimerRequest.isValidName(timer) else { throw .invalidTimer(Self.badName(timer)) }
        _ = try await request({ .cancel(id: $0, timer: timer) }, timer: nil)
    }

    /// `after` and `timer` as the protocol takes them, or ``RoomClientError/invalidTimer(_:)``.
    static func timerRequest(after delay: Duration, timer: String?) throws(RoomClientError) -> TimerRequest {
        let milliseconds = delay / .milliseconds(1)
        guard milliseconds >= 0, milliseconds <= Double(TimerRequest.maxAfter) else {
            throw .invalidTimer("a delay of \(delay) is outside 0 to 7 days")
        }
        if let timer, !TimerRequest.isValidName(timer) { throw .invalidTimer(Self.badName(timer)) }
        return TimerRequest(after: Int(milliseconds), name: timer)
    }

    private static func badName(_ name: String) -> String {
        "\"\(name)\" is not a timer name (1 to \(TimerRequest.maxNameLength) characters of A-Z a-z 0-9 . _ -)"
    }

    /// A name for a timer scheduled without one, picked here rather than by the server, so the answer names it even
    /// when it is lost to a drop.
    private static func randomTimerName() -> String {
        "t-" + String(UInt64.random(in: .min ... .max), radix: 36)
    }

    /// Says what this client is doing (a cursor, "typing"): any JSON of at most the server's `--presence-limit` bytes
    /// (1024 by default), or nil for nothing. Every client of the room sees it in ``peers``; it is never part of the
    /// room's state. Sent at most once per ``presenceInterval``, the latest state winning, and again after each
    /// reconnection (a server forgets it when the connection ends). A state the server refuses (`too_large`)
    /// arrives as a `serverError` update.
    public func setPresence(_ state: JSON?) throws(RoomClientError) {
        guard !isClosed else { throw .closed }
        presenceState = state
        presenceOwed = true
        sendPresenceWhenDue()
    }

    /// Sends the owed presence state now, or once ``presenceInterval`` has passed since the last one.
    private func sendPresenceWhenDue() {
        guard presenceOwed, presenceTimer == nil, let socket, synced else { return }
        if let last = lastPresenceSent, last.duration(to: .now) < Self.presenceInterval {
            let wait = Self.presenceInterval - last.duration(to: .now)
            presenceTimer = Task {
                try? await Task.sleep(for: wait)
                self.presenceTimerEnded()
            }
            return
        }
        presenceOwed = false
        lastPresenceSent = .now
        socket.send(ClientMessage.presence(id: nil, state: presenceState ?? .null).json.serialized())
    }

    private func presenceTimerEnded() {
        presenceTimer = nil
        sendPresenceWhenDue()
    }

    /// The room's most recent changes, newest last (the server's default count when `limit` is nil).
    public func history(limit: Int? = nil) async throws(RoomClientError) -> [ServerMessage.HistoryRecord] {
        guard !isClosed else { throw .closed }
        guard let socket, synced else { throw .notConnected }
        let id = "\(idPrefix)\(nextRequest)"
        nextRequest += 1
        let frame = ClientMessage.history(id: id, limit: limit).json.serialized()
        let result = await withCheckedContinuation { continuation in
            pending[id] = continuation
            socket.send(frame)
        }
        return try result.get()
    }

    /// Puts a change request (made from its id) in the outbox, sends it when connected, and returns the version in
    /// its ack; every change request goes through here, so each is numbered and applied once.
    private func change(_ make: (String) -> ClientMessage) async throws(RoomClientError) -> Int {
        switch try await request(make, timer: nil) {
        case .applied(let version): return version
        case .scheduled: return version
        }
    }

    /// Puts a request in the outbox and waits for its answer; a `timer` makes it a scheduled action.
    private func request(
        _ make: (String) -> ClientMessage, timer: TimerRequest?
    ) async throws(RoomClientError) -> Outbox.Answer {
        guard !isClosed else { throw .closed }
        guard !outbox.isFull else { throw .outboxFull(limit: outbox.limit) }
        let result = await withCheckedContinuation { continuation in
            queue(make, timer: timer, waiter: continuation)
        }
        return try result.get()
    }

    /// Queues an action without waiting for its answer: returns once it is in the outbox (and in the kept file, with
    /// a keep directory), so enqueued actions go out in the order they were enqueued. It shows in
    /// ``pendingActions`` until its patch arrives; a refusal arrives as a `serverError` update.
    public func enqueue(action: JSON) throws(RoomClientError) {
        guard !isClosed else { throw .closed }
        guard !outbox.isFull else { throw .outboxFull(limit: outbox.limit) }
        queue({ .action(id: $0, action: action) }, waiter: nil)
    }

    /// Puts a request in the outbox (kept on disk before it may leave), and sends it when connected.
    private func queue(
        _ make: (String) -> ClientMessage, timer: TimerRequest? = nil,
        waiter: CheckedContinuation<Result<Outbox.Answer, RoomClientError>, Never>?
    ) {
        let id = "\(idPrefix)\(nextRequest)"
        nextRequest += 1
        outbox.append(Outbox.Entry(id: id, message: make(id), timer: timer, waiter: waiter))
        saveKept(refreshingState: false)
        flushOutbox()
        emit(.outbox)
    }

    /// Sends the requests answered `unavailable` again after the reconnection policy's delay, longer for each
    /// refusal in a row.
    private func resendLater() {
        refusals += 1
        guard resendTask == nil else { return }
        let delay = policy.delay(afterFailures: refusals)
        resendTask = Task { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.resendRefused()
        }
    }

    private func resendRefused() {
        resendTask = nil
        flushOutbox()
    }

    /// Sends what the outbox has not sent on this connection, in order; nothing while not in sync. The `seq` numbers
    /// given here are kept before the requests leave, so a restarted client sends them again with the same ones.
    private func flushOutbox() {
        guard let socket, synced else { return }
        if outbox.number() { saveKept(refreshingState: false) }
        for frame in outbox.framesToSend() { socket.send(frame) }
    }

    // MARK: - Connection loop

    private func run() async {
        var failures = 0
        while !isClosed {
            setStatus(.connecting(failures: failures))
            let since = holdsState && resyncReason == nil ? version : nil
            resyncReason = nil
            let socket: WebSocket
            do {
                socket = try await WebSocket.connect(url.url(since: since, epoch: epoch), using: transport)
            } catch {
                if !holdsState {
                    // Each address is tried once before the first connection counts as failed.
                    if current + 1 < urls.count {
                        current += 1
                        continue
                    }
                    guard keeper != nil else {
                        finishConnect(.failure(.connectionFailed(Self.describe(error))))
                        return
                    }
                    // A kept client works offline from its first start.
                    finishConnect(.success(()))
                }
                failures += 1
                moveToNextURL()
                guard await waitBeforeRetry(reason: Self.describe(error), failures: failures) else { return }
                continue
            }
            guard !isClosed else {
                socket.close()
                return
            }
            self.socket = socket
            refusal = nil
            // A new connection starts with no presence state on the server.
            presenceOwed = presenceState != nil
            for await message in socket.messages {
                if socket === droppedSocket { break }
                guard case .text(let bytes) = message else { continue }
                receive(bytes)
                if resyncReason != nil { break }
            }
            droppedSocket = nil
            let wasSynced = synced
            self.socket = nil
            synced = false
            failPending(.disconnected)
            if let reason = resyncReason {
                socket.close()
                setStatus(.resynchronising(reason: reason))
                failures += 1
                // A first resynchronisation is immediate; repeated ones back off like failures.
                if failures > 1, !(await waitBeforeRetry(reason: reason, failures: failures - 1)) { return }
                continue
            }
            guard !isClosed else { return }
            if !holdsState {
                guard keeper != nil else {
                    finishConnect(.failure(Self.refused(by: socket, message: refusal)))
                    return
                }
                finishConnect(.success(()))
            }
            if socket.closeCode == Self.goingAway {
                // The server drains: it answered what it read. Another one (or this address again, behind a proxy)
                // takes the session now.
                moveToNextURL()
                if wasSynced {
                    failures = 0
                    continue
                }
            }
            failures = wasSynced ? 1 : failures + 1
            let reason =
                (socket.closeReason.isEmpty ? "connection closed" : socket.closeReason)
                + (refusal.map { ": \($0)" } ?? "")
            guard await waitBeforeRetry(reason: reason, failures: failures) else { return }
        }
    }

    /// Why a connection that ended before its first snapshot failed: the server's close code and reason, with the
    /// error it sent before closing; a drop without a close frame is a failed connection.
    private static func refused(by socket: WebSocket, message: String?) -> RoomClientError {
        guard let code = socket.closeCode else {
            return .connectionFailed(message ?? "closed before the first snapshot")
        }
        return .closedByServer(code: code, reason: socket.closeReason, message: message)
    }

    /// The close code of a server that is going away (draining): reconnect now.
    static let goingAway: UInt16 = 1001

    /// The next address, when there are several.
    private func moveToNextURL() {
        current = (current + 1) % urls.count
    }

    /// Announces the drop and sleeps the backoff delay; false when closed meanwhile.
    private func waitBeforeRetry(reason: String, failures: Int) async -> Bool {
        let delay = policy.delay(afterFailures: failures)
        setStatus(.disconnected(reason: reason, retryIn: delay))
        do {
            try await Task.sleep(for: delay)
        } catch {
            return false
        }
        return !isClosed
    }

    private static func describe(_ error: TransportError) -> String {
        switch error {
        case .connectionFailed(let reason), .invalidURL(let reason), .contextCreationFailed(let reason),
            .tlsSetupFailed(let reason):
            reason
        case .shutDown: "the WebSocket client was shut down"
        case .addressInUse, .cannotListen: error.message
        }
    }

    // MARK: - Messages

    private func receive(_ bytes: [UInt8]) {
        let message: ServerMessage
        let json: JSON
        do {
            json = try JSON(parsing: bytes)
            message = try ServerMessage(json: json)
        } catch {
            // A frame this client cannot read: it may have missed a change, so start again from a snapshot.
            requestResync("unreadable message from the server: \(error)")
            return
        }
        receive(message, epoch: json["epoch"]?.stringValue, mark: json["seq"]?.intValue)
    }

    /// Applies one server message to the mirror; `epoch` and `mark` are a snapshot's or resume's. Internal so tests
    /// can feed messages a real server never sends.
    func receive(_ message: ServerMessage, epoch: String? = nil, mark: Int? = nil) {
        guard resyncReason == nil else { return }
        switch message {
        case .snapshot(_, let you, let version, let state, let undo, let redo):
            if let kept = keptEpochToCheck {
                keptEpochToCheck = nil
                if let epoch, epoch != kept { setAsideKeptHistory(kept: kept, server: epoch) }
            }
            self.you = you
            self.epoch = epoch
            self.state = state
            self.version = version
            undoCount = undo
            redoCount = redo
            holdsState = true
            synced = true
            goLive(announcing: .snapshot)
            sessionSynced(you: you, mark: mark, snapshot: true)
            finishConnect(.success(()))
        case .resume(_, let you, let version):
            guard holdsState, version == self.version else {
                requestResync("the server resumed at version \(version), the mirror is at \(self.version)")
                return
            }
            guard epoch == nil || epoch == self.epoch else {
                requestResync("the server resumed another history of the room")
                return
            }
            keptEpochToCheck = nil
            self.you = you
            synced = true
            goLive(announcing: .resumed)
            sessionSynced(you: you, mark: mark, snapshot: false)
        case .patch(let version, let ops, let cause, let undo, let redo):
            guard synced else {
                requestResync("a patch arrived before any snapshot")
                return
            }
            guard order.accepts(version, after: self.version) else {
                requestResync("version gap: got \(version) after \(self.version)")
                return
            }
            var next = state
            do {
                _ = try ops.apply(to: &next)
            } catch {
                requestResync("patch \(version) does not apply: \(error)")
                return
            }
            state = next
            self.version = version
            undoCount = undo
            redoCount = redo
            if let client = cause.client, let id = cause.id, yous.contains(client) {
                outbox.mirrored(id: id, at: version)
            }
            scheduleSave()
            emit(.patch(ops: ops, cause: cause, changedPaths: Self.changedPaths(ops)))
        case .ack(let id, let version):
            guard let id else { break }
            refusals = 0
            if let entry = outbox.remove(id: id) {
                entry.waiter?.resume(returning: .success(.applied(version: version)))
                scheduleSave()
                emit(.outbox)
            }
        case .error(let id, let code, let message):
            if let id, let waiter = pending.removeValue(forKey: id) {
                waiter.resume(returning: .failure(.server(code: code, message: message)))
            } else if let id, code == "unavailable", outbox.sendAgain(id: id) {
                // Not stored this time, though an earlier connection's copy may have been: it goes out again with
                // its `seq`, which the server recognises if so.
                emit(.serverError(code: code, message: message))
                resendLater()
            } else if let id, let entry = outbox.remove(id: id) {
                // Refused, so not applied: it leaves the outbox (and the prediction) and its send throws.
                scheduleSave()
                if let waiter = entry.waiter {
                    waiter.resume(returning: .failure(.server(code: code, message: message)))
                } else {
                    emit(.serverError(code: code, message: message))
                }
                emit(.outbox)
            } else {
                if id == nil, !synced { refusal = message }
                emit(.serverError(code: code, message: message))
            }
        case .presence(let peers):
            let joined = peers.filter { peer in !self.peers.contains { $0.client == peer.client } }
            let left = self.peers.filter { peer in !peers.contains { $0.client == peer.client } }
            self.peers = peers
            emit(.presence(joined: joined, left: left))
        case .presenceChanged(let changed):
            for peer in changed {
                guard let index = peers.firstIndex(where: { $0.client == peer.client }) else { continue }
                peers[index] = peer
            }
            emit(.presence(joined: [], left: []))
        case .history(let id, let entries):
            if let id, id == barrier {
                barrier = nil
                answerCovered()
            } else if let id {
                pending.removeValue(forKey: id)?.resume(returning: .success(entries))
            }
        case .scheduled(let id, let timer, let due):
            // Nothing in the mirror changes until the timer fires.
            guard let id, let entry = outbox.remove(id: id) else { break }
            entry.waiter?.resume(returning: .success(.scheduled(timer: timer, due: due)))
            scheduleSave()
            emit(.outbox)
        }
    }

    /// A connection synced: requests the session's mark covers were applied and are not sent again; the others go
    /// out again, in order. After a snapshot the covered ones are answered at once (the snapshot holds them); after
    /// a resume, once a `history` request sent behind the missed patches comes back, so their patches are mirrored
    /// when their sends return.
    private func sessionSynced(you: String, mark: Int?, snapshot: Bool) {
        // After a snapshot no patch of an earlier connection can arrive.
        if snapshot { yous.removeAll() }
        yous.insert(you)
        barrier = nil
        if snapshot { scheduleSave() }
        if outbox.synced(mark: mark ?? 0, snapshot: snapshot, version: version) {
            if snapshot {
                answerCovered()
            } else if let socket {
                let id = "\(idPrefix)sync\(nextRequest)"
                nextRequest += 1
                barrier = id
                socket.send(ClientMessage.history(id: id, limit: 0).json.serialized())
            }
        }
        flushOutbox()
        sendPresenceWhenDue()
    }

    /// Answers the requests the session's mark covered, with the mirror's version (which includes them).
    private func answerCovered() {
        let covered = outbox.removeCovered()
        for entry in covered { entry.waiter?.resume(returning: .success(.applied(version: version))) }
        if !covered.isEmpty {
            scheduleSave()
            emit(.outbox)
        }
    }

    /// The mirrored state and the actions not yet in it, read together.
    func mirrorAndPending() -> (state: JSON, pending: [JSON]) {
        (state, outbox.predictedActions)
    }

    /// Closes the current connection as a network blip would, so tests can watch a resume. Internal.
    func dropConnectionForTesting() {
        droppedSocket = socket
        socket?.close(code: 1001, reason: "dropped for testing")
    }

    private func requestResync(_ reason: String) {
        guard resyncReason == nil else { return }
        resyncReason = reason
        synced = false
        socket?.close(code: 1000, reason: "resynchronising")
    }

    /// Where a patch touched the state: each operation's path, and the source of a move.
    static func changedPaths(_ ops: JSONPatch) -> [JSONPointer] {
        var paths: [JSONPointer] = []
        for operation in ops.operations {
            switch operation {
            case .test: continue
            case .move(let from, let path):
                paths.append(from)
                paths.append(path)
            default:
                paths.append(operation.path)
            }
        }
        var unique: [JSONPointer] = []
        for path in paths where !unique.contains(path) { unique.append(path) }
        return unique
    }

    // MARK: - Bookkeeping

    private func emit(_ change: RoomUpdate.Change) {
        let pendingActions = outbox.predictedActions
        backlog.yield(RoomUpdate(
            change: change, room: room, you: you, version: version, state: state, peers: peers,
            undoCount: undoCount, redoCount: redoCount, status: status, pendingCount: outbox.count,
            pendingActions: pendingActions
        ))
        publish(pendingActions: pendingActions)
    }

    /// Hands the mirror's values to ``mirror`` (on its isolation) and to the watchers.
    private func publish(pendingActions: [JSON]? = nil) {
        let values = RoomMirror.Values(
            state: state, version: version, status: status, peers: peers, pendingCount: outbox.count,
            pendingActions: pendingActions ?? outbox.predictedActions, undoCount: undoCount, redoCount: redoCount,
            stateGeneration: stateGeneration)
        mirrorFeed.send(values)
        for watcher in watchers.withLock({ $0 }) { watcher(values) }
    }

    // MARK: - Keeping

    /// Writes the kept file: the outbox as it is now, with the state as last serialized, or serialized again now
    /// (`refreshingState`). Requests are written before they may leave; the state, which may be large, at most a
    /// few times a second (``scheduleSave()``): a kept state older than the outbox only means more patches on resume.
    private func saveKept(refreshingState: Bool) {
        guard let keeper else { return }
        if refreshingState, kept.generation != stateGeneration || kept.synced != holdsState {
            kept = (stateGeneration, holdsState ? state.serialized() : Array("null".utf8), version, epoch, holdsState)
        }
        let file = KeptRoom(
            app: keeper.directory.app, room: room, path: path.description, session: session, epoch: kept.epoch,
            synced: kept.synced, version: kept.version, nextSeq: outbox.nextSeq, outbox: outbox.kept, state: .null)
        do {
            try keeper.replace(with: file.serialized(stateBytes: kept.bytes))
        } catch {
            logger.error("\(error)")
        }
    }

    /// Writes the kept file (state included) soon, once for many changes in a row.
    private func scheduleSave() {
        guard keeper != nil, saveTask == nil, !isClosed else { return }
        saveTask = Task {
            try? await Task.sleep(for: .milliseconds(250))
            self.savePending()
        }
    }

    private func savePending() {
        saveTask = nil
        guard !isClosed else { return }
        saveKept(refreshingState: true)
    }

    /// The server's room has another history than the kept state: that file is set aside, and the requests kept
    /// with it are dropped (they were numbered for a history that is gone).
    private func setAsideKeptHistory(kept: String, server: String) {
        guard let keeper else { return }
        let dropped = outbox.removeRestored()
        keeper.setAside(
            "the room's history changed (kept epoch \(kept), the server's is \(server)); "
                + "\(dropped) kept requests dropped")
        saveKept(refreshingState: false)
    }

    /// Emits a sync (snapshot or resume) already carrying the live status, then the status change itself.
    private func goLive(announcing change: RoomUpdate.Change) {
        let wasLive = status == .live
        status = .live
        emit(change)
        if !wasLive { emit(.status(.live)) }
    }

    private func setStatus(_ status: ConnectionStatus) {
        guard status != self.status else { return }
        self.status = status
        emit(.status(status))
    }

    private func failPending(_ error: RoomClientError) {
        let waiters = pending
        pending = [:]
        for waiter in waiters.values { waiter.resume(returning: .failure(error)) }
    }

    private func failOutbox(_ error: RoomClientError) {
        for entry in outbox.removeAll() { entry.waiter?.resume(returning: .failure(error)) }
    }

    /// A random session name: 128 bits, so two clients never share one.
    private static func randomSession() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 36) }.joined(separator: "-")
    }

    private func finishConnect(_ result: Result<Void, RoomClientError>) {
        if case .failure(let error) = result, !holdsState {
            failOutbox(error)
            isClosed = true
            status = .closed
            publish()
            mirrorFeed.finish()
            backlog.finish()
            if ownsTransport { transport.shutdown() }
        }
        connectWaiter?.resume(returning: result)
        connectWaiter = nil
    }
}
