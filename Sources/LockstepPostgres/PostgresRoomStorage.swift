public import LockstepStorage
public import Logging
import PostgresNIO
import Synchronization

/// Rooms in PostgreSQL, shared by every server given the same database (`lockstep serve --postgres URL`).
///
/// A room's row in `rooms` is its lock: ``write(room:after:sessions:prepare:)`` holds it (`SELECT … FOR UPDATE`)
/// for one transaction, so every server commits a room's versions in one order. Commits (just after them) and peer
/// lists are announced with `pg_notify` on one channel, heard by each server's listening connection (``events()``).
///
/// Every call is bounded by ``Configuration/operationTimeout``: a database that cannot be reached makes calls throw
/// `StorageError.unavailable` within it, never hang; none blocks its caller's thread.
public final class PostgresRoomStorage: SharedRoomStorage {
    /// Limits of the storage; each has a default fit for a server.
    public struct Configuration: Sendable {
        /// How long a server's published peers stay listed when it stops renewing them (killed, cut off).
        public var peerLifetime: Duration = .seconds(15)
        /// The longest any one call may take before it fails as `StorageError.unavailable`.
        public var operationTimeout: Duration = .seconds(5)
        /// The most connections the pool opens (the listening connection is one more).
        public var maximumConnections = 20
        /// How many versions of changes ``write(room:after:sessions:prepare:)`` keeps before a room's latest snapshot
        /// (the server's `--keep-history`); `append` takes it as an argument.
        public var keepHistory = 10_000

        /// The defaults of `lockstep serve --postgres`.
        public init() {}
    }

    /// The channel of every notification.
    static let channel = "lockstep"

    public let node: Int
    /// Timeouts, pool size and kept history this storage was opened with.
    public let configuration: Configuration
    public var peerLifetime: Duration { configuration.peerLifetime }
    public var isAvailable: Bool { available.load(ordering: .acquiring) }

    let client: PostgresClient
    let connectionConfiguration: PostgresConnection.Configuration
    let logger: Logger
    let available = Atomic(true)
    let stream: AsyncStream<StorageEvent>
    let continuation: AsyncStream<StorageEvent>.Continuation
    /// The pool's `run()`, the listener, the renewal of peers and the probe; cancelled by ``close()``.
    let tasks = Mutex<[Task<Void, Never>]>([])
    let probing = Atomic(false)
    let closed = Atomic(false)
    /// Commits not yet announced to the other servers.
    let notices = CommitNotices()

    /// Connects to `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=require]`), creates or migrates
    /// the schema, refuses a database of another app, takes this server's node number and starts listening.
    public init(
        url: String, app: String, configuration: Configuration = .init(), logger: Logger
    ) async throws(StorageError) {
        self.configuration = configuration
        self.logger = logger
        let location = try PostgresLocation(url: url)
        var connectionConfiguration = try location.connectionConfiguration
        connectionConfiguration.options.connectTimeout = .milliseconds(
            Int64(configuration.operationTimeout / .milliseconds(1)))
        self.connectionConfiguration = connectionConfiguration
        var clientConfiguration = location.clientConfiguration
        clientConfiguration.options.maximumConnections = configuration.maximumConnections
        clientConfiguration.options.connectTimeout = configuration.operationTimeout
        // PostgresNIO logs every failed connection attempt at info; the storage says itself, once, that PostgreSQL
        // cannot be reached (a warning, or the error of a server that cannot start).
        var background = logger
        if background.logLevel == .info { background.logLevel = .notice }
        client = PostgresClient(configuration: clientConfiguration, backgroundLogger: background)
        (stream, continuation) = AsyncStream.makeStream(of: StorageEvent.self)
        let client = client
        let run = Task { await client.run() }
        let timeout = configuration.operationTimeout
        func step<T: Sendable>(
            _ what: String, _ operation: @escaping @Sendable () async throws -> T
        ) async throws(StorageError) -> T {
            switch await Deadline.race(timeout, operation) {
            case .success(let value):
                return value
            case .failure(let error):
                run.cancel()
                throw Self.describe(error, while: what, timeout: timeout).error
            }
        }
        try await step("open the database") { try await Self.migrate(client, app: app, logger: logger) }
        node = try await step("take a node number") {
            for number in try await client.rows("SELECT nextval('lockstep_nodes')", decoding: Int.self, logger: logger)
            {
                return number
            }
            throw StorageError.database("nextval('lockstep_nodes') returned nothing")
        }
        tasks.withLock { $0.append(run) }
        do {
            try await startListening()
        } catch {
            cancelTasks()
            throw error
        }
        startRenewingPeers()
        logger.info("rooms in PostgreSQL", metadata: ["node": "\(node)", "database": "\(location.description)"])
    }

    /// Stops listening, announces the last commits, withdraws this server's peers and closes every connection;
    /// returns at once, leaving the rest (bounded like every call) to finish on its own.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        continuation.finish()
        Task { [self] in
            let deadline = ContinuousClock.now + configuration.operationTimeout
            while !notices.isIdle, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
            _ = try? await bounded("withdraw the peers") { [self] in
                try await client.query("DELETE FROM peers WHERE node = \(node)")
            }
            cancelTasks()
        }
    }

    public func events() -> AsyncStream<StorageEvent> { stream }

    func cancelTasks() {
        for task in tasks.withLock({ tasks in defer { tasks = [] }; return tasks }) { task.cancel() }
    }

    /// Runs `operation`, failing with `StorageError.unavailable` after ``Configuration/operationTimeout``
    /// (the operation is then cancelled, and left to end on its own) or when the database cannot be reached. One that
    /// succeeds found the database: the storage is available again without waiting for the probe.
    func bounded<T: Sendable>(
        _ what: String, _ operation: @escaping @Sendable () async throws -> T
    ) async throws(StorageError) -> T {
        switch await Deadline.race(configuration.operationTimeout, operation) {
        case .success(let value):
            available.store(true, ordering: .releasing)
            return value
        case .failure(let error):
            throw classify(error, while: what)
        }
    }

    /// A StorageError for `error`; an unreachable database also marks the storage unavailable until a probe succeeds.
    func classify(_ error: any Error, while what: String) -> StorageError {
        let (error, unreachable) = Self.describe(error, while: what, timeout: configuration.operationTimeout)
        if unreachable { markUnavailable() }
        return error
    }

    /// A StorageError for `error`, and whether it means the database cannot be reached (rather than refusing SQL).
    static func describe(
        _ error: any Error, while what: String, timeout: Duration
    ) -> (error: StorageError, unreachable: Bool) {
        if let error = error as? PostgresTransactionError,
            let cause = error.closureError ?? error.commitError ?? error.beginError
        {
            return describe(cause, while: what, timeout: timeout)
        }
        if let error = error as? StorageError {
            if case .unavailable = error { return (error, true) }
            return (error, false)
        }
        if let error = error as? PSQLError, error.code == .server {
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = "\(what): \(error.serverInfo?[.message] ?? "error") (SQLSTATE \(state))"
            // Connection exceptions (08) and operator intervention (57: shutdown, cannot connect now).
            guard state.hasPrefix("08") || state.hasPrefix("57") else { return (.database(message), false) }
            return (.unavailable(message), true)
        }
        let reason: String
        switch error {
        case is Deadline.Expired: reason = "no answer within \(timeout)"
        case is CancellationError: reason = "cancelled"
        case let error as PSQLError: reason = "\(error.code)" + (error.underlying.map { " (\($0))" } ?? "")
        default: reason = "\(error)"
        }
        return (.unavailable("\(what): \(reason)"), true)
    }

    /// Marks the storage unavailable and probes the database (`SELECT 1`, backing off from 100 ms to 2 s) until it
    /// answers.
    func markUnavailable() {
        available.store(false, ordering: .releasing)
        guard !closed.load(ordering: .acquiring), !probing.exchange(true, ordering: .acquiringAndReleasing) else {
            return
        }
        logger.warning("PostgreSQL cannot be reached; probing until it answers")
        let task = Task { [self] in
            var delay = Duration.milliseconds(100)
            while !Task.isCancelled {
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
                do {
                    try await probe()
                    available.store(true, ordering: .releasing)
                    logger.info("PostgreSQL answers again")
                    break
                } catch {
                    continue
                }
            }
            probing.store(false, ordering: .releasing)
        }
        tasks.withLock { $0.append(task) }
    }

    private func probe() async throws {
        _ = try await Deadline.race(configuration.operationTimeout) { [client] in
            try await client.query("SELECT 1")
        }.get()
    }
}
