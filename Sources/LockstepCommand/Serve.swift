import ArgumentParser
import Foundation
import LockstepApps
import LockstepCore
import LockstepPostgres
import LockstepServer
import LockstepStorage
import LockstepSQLite
import LockstepTransport
import Logging

/// `lockstep serve`: runs the server until SIGTERM or SIGINT, then drains it (see `SyncServer.run()`).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve rooms over WebSocket (ws://HOST:PORT/rooms/ROOM) and HTTP on one port."
    )

    @Option(help: "Address to listen on. Keep the loopback default unless clients elsewhere must connect.")
    var host = "127.0.0.1"

    @Option(help: "TCP port for WebSocket and HTTP (0 picks a free port).")
    var port = 8080

    @Option(help: "The reducer every room runs: \(CommandApps.names) (default: \(CommandApps.first.name)).")
    var app: String?

    @Option(help: "Changes each room can undo.")
    var undoDepth = 1000

    @Option(help: "Largest message a client may send, in bytes (larger: too_large, close 1009).")
    var maxFrame = 1 << 20

    @Option(
        help: """
            Most bytes one patch of the json app may write (a copy counts what it copies); a larger one is \
            rejected, the room left as it was.
            """)
    var maxChange = JSONDocument.defaultMaxChangeBytes

    @Option(help: "Bytes of broadcasts a connection may leave unwritten before its progress is watched.")
    var queueLimit = 4 << 20

    @Option(
        help: """
            How long a connection past --queue-limit may take nothing from its socket before its queued broadcasts \
            are dropped for one fresh snapshot (e.g. 1s, 500ms).
            """)
    var stallTimeout = Duration.seconds(1)

    @Option(help: "Patches each room keeps for clients resuming with since=.")
    var resumeWindow = 10_000

    @Option(
        help: """
            Open WebSocket connections accepted; further handshakes are refused. Default: as many as the file \
            descriptor limit allows, less 5 % kept for refusals and HTTP.
            """)
    var maxConnections: Int?

    @Option(
        help: """
            Bytes read per connection at a time; each connection holds a buffer this size, most of its idle memory. \
            Larger messages arrive in several reads; waiting input is read on within a pass, up to 4 KiB.
            """)
    var receiveBuffer = 512

    @Option(
        help: """
            How the loop waits for sockets: poll costs every connection on each pass, the cheaper loop for busy rooms; \
            epoll costs only the ready ones, for many mostly idle connections.
            """)
    var eventLoop = EventLoopBackend.poll

    @Option(
        help: """
            After a pass of the loop that only read (sent nothing: presence states), how long from its start the next \
            waits for more input, so many clients sending a little each cost one wake-up; answers and storage \
            commits never wait. 0: none.
            """)
    var gatherInterval = Duration.milliseconds(1)

    @Option(help: "Messages per second one connection may send (0: no limit); a faster one is read more slowly.")
    var rateLimit = 1_000

    @Option(help: "Peers one presence message lists at most; its count field gives the room's size.")
    var presencePeers = 100

    @Option(help: "Largest presence state a client may set, in bytes as the server writes it (larger: too_large).")
    var presenceLimit = 1_024

    @Option(
        help: """
            Shortest time between two presence messages of a room, per 100 clients in it (e.g. 50ms); joins, leaves \
            and states in between are merged.
            """)
    var presenceInterval = Duration.milliseconds(50)

    @Option(help: "Directory where rooms are kept (SQLite, write-ahead). Created if missing.")
    var data = "./lockstep-data"

    @Option(
        help: """
            Keep rooms in PostgreSQL (postgres://USER[:PASSWORD]@HOST:PORT/DATABASE) instead of --data: every server \
            given the same database serves the same rooms.
            """)
    var postgres: String?

    @Option(help: "With --postgres: how long one database call may take before the server counts it unreachable.")
    var postgresTimeout = Duration.seconds(5)

    @Option(help: "With --postgres: how long the clients of a server that died stay in other servers' presence.")
    var peerLifetime = Duration.seconds(15)

    @Flag(help: "Keep rooms in memory only: nothing is written, a restart loses them, idle ones are never released.")
    var memory = false

    @Option(help: "How long a room with no clients stays in memory before it is written out and released.")
    var roomIdle = Duration.seconds(60)

    @Option(help: "normal: an ack survives a killed server; full: it also survives power loss (slower).")
    var sync: RoomLog.Sync = .normal

    @Option(help: "Versions of each room's log kept behind its latest snapshot (resume and history across restarts).")
    var keepHistory = 10_000

    @Option(help: "Open WebSocket connections from one IP address (loopback included); further handshakes are refused.")
    var maxConnectionsPerIp = 1_000

    @Option(help: "Time a new connection has to send its whole handshake or HTTP request (whole seconds: 10s, 1m).")
    var handshakeTimeout = Duration.seconds(10)

    @Option(
        help: """
            A WebSocket client that answered no ping for this long is pinged, and closed if it answers none \
            within 10s more (whole seconds: 30s, 5m).
            """)
    var pingInterval = Duration.seconds(300)

    @Option(
        help: """
            A web page origin (e.g. https://app.example.com) allowed to open WebSockets here besides the server's own; \
            repeatable; * allows every page. Other pages' handshakes get 403.
            """)
    var allowedOrigin: [String] = []

    @Option(
        name: .customLong("private"),
        help: """
            A part of every room that only its owner sees: a JSON Pointer whose one segment may be {sub}, the \
            token's subject (/hands/{sub}); repeatable. Needs --auth-secret-file.
            """)
    var privatePattern: [String] = []

    @Option(help: "Time after which a room forgets an idle client session's seq mark (at least 1h: 90m, 24h, 7d).")
    var sessionIdle = Duration.seconds(24 * 3_600)

    @Option(help: "Client sessions whose seq marks one room keeps; past it the least recently active is forgotten.")
    var sessionLimit = 10_000

    @Option(help: "Pending timers (actions scheduled with after) one room may hold; one more is rejected.")
    var maxTimers = 1_000

    @Option(
        help: """
            Role a token needs for global undo, redo and revert (write or admin); below it they are refused while \
            undo mine and redo mine need only write.
            """)
    var historyRole = AccessRole.write

    @Option(help: "PEM certificate (chain): serve TLS only, wss:// and https://, on --port. Needs --tls-key.")
    var tlsCert: String?

    @Option(help: "Unencrypted PEM private key of --tls-cert.")
    var tlsKey: String?

    @Flag(
        inversion: .prefixedNo,
        help: "permessage-deflate for clients that offer it; --no-compression sends every client plain frames.")
    var compression = true

    @Option(help: "Messages shorter than this many bytes go to deflate clients uncompressed.")
    var compressMin = 128

    @OptionGroup var auth: AuthOptions

    @Flag(
        help: "Allow a non-loopback --host without an auth secret: anyone who reaches it reads and writes every room.")
    var insecure = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (debug: every connection, change).")
    var logLevel: Logger.Level = .info

    @Option(help: "Bytes of a change's patch and action written to one debug log line; the rest is cut.")
    var auditLimit = 1_024

    @Option(help: "Log lines on stderr: text, or json (one JSON object per line, for a log collector).")
    var logFormat: LogFormat = .text

    @Option(
        help: """
            On SIGTERM: how long the server may take to answer what it read, store it and close every connection \
            (1001) before it exits.
            """)
    var drainTimeout = Duration.seconds(10)

    func validate() throws {
        do {
            _ = try PrivateParts(privatePattern)
        } catch {
            throw ValidationError("--private: \(error)")
        }
        guard privatePattern.isEmpty || auth.isSet else {
            throw ValidationError(AccessError.privatePartsWithoutTokens.message)
        }
        if let app, CommandApps.named(app) == nil {
            throw ValidationError("unknown app '\(app)'; choose one of: \(CommandApps.names)")
        }
        for (name, value) in [
            ("undo-depth", undoDepth), ("resume-window", resumeWindow), ("rate-limit", rateLimit),
            ("keep-history", keepHistory), ("presence-peers", presencePeers), ("audit-limit", auditLimit),
            ("presence-limit", presenceLimit),
        ]
        where value < 0 {
            throw ValidationError("--\(name) cannot be negative")
        }
        for (name, value) in [
            ("max-frame", maxFrame), ("max-change", maxChange), ("queue-limit", queueLimit),
            ("max-connections", maxConnections ?? 1),
            ("receive-buffer", receiveBuffer),
        ]
        where value <= 0 {
            throw ValidationError("--\(name) must be positive")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard maxConnectionsPerIp > 0 else { throw ValidationError("--max-connections-per-ip must be positive") }
        guard handshakeTimeout >= .seconds(1) else { throw ValidationError("--handshake-timeout must be at least 1s") }
        guard pingInterval >= .seconds(1) else { throw ValidationError("--ping-interval must be at least 1s") }
        guard stallTimeout >= .zero, roomIdle >= .zero else {
            throw ValidationError("--stall-timeout and --room-idle cannot be negative")
        }
        guard gatherInterval >= .zero, gatherInterval <= .milliseconds(100) else {
            throw ValidationError("--gather-interval must be between 0 and 100ms")
        }
        guard presenceInterval >= .zero else { throw ValidationError("--presence-interval cannot be negative") }
        guard sessionIdle >= .seconds(3_600) else { throw ValidationError("--session-idle must be at least 1h") }
        guard postgres == nil || !memory else { throw ValidationError("--postgres and --memory exclude each other") }
        guard postgresTimeout >= .milliseconds(100), peerLifetime >= .seconds(3) else {
            throw ValidationError("--postgres-timeout must be at least 100ms and --peer-lifetime at least 3s")
        }
        guard sessionLimit > 0 else { throw ValidationError("--session-limit must be positive") }
        guard maxTimers >= 0 else { throw ValidationError("--max-timers must be 0 or more") }
        guard drainTimeout >= .milliseconds(100) else {
            throw ValidationError("--drain-timeout must be at least 100ms")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together: give both PEM files, or neither")
        }
        guard compressMin >= 0 else { throw ValidationError("--compress-min cannot be negative") }
        if !ServerConfiguration.isLoopback(host), !auth.isSet, !insecure {
            throw ValidationError(
                "refusing to listen on \(host) with no auth secret: anyone who can reach it could read and write every "
                    + "room. Give --auth-secret-file PATH (or --auth-secret SECRET), or pass --insecure to accept that."
            )
        }
    }

    func run() async throws {
        logFormat.bootstrap()
        var logger = Logger(label: "lockstep")
        logger.logLevel = logLevel
        var served = app.flatMap(CommandApps.named) ?? CommandApps.first
        // The built-in json app (not an app of one's own by that name) with the bound `--max-change` gives it.
        if served.name == App.json.name, served.summary == App.json.summary {
            served = .json(maxChangeBytes: maxChange)
        }
        var configuration = ServerConfiguration(app: served)
        configuration.host = host
        configuration.port = port
        configuration.undoDepth = undoDepth
        configuration.maxFrameBytes = maxFrame
        configuration.queueLimitBytes = queueLimit
        configuration.stallTimeout = stallTimeout
        configuration.roomIdle = roomIdle
        configuration.auditLimitBytes = auditLimit
        configuration.allowedOrigins = allowedOrigin
        configuration.resumeWindow = resumeWindow
        configuration.maxConnections = maxConnections
        configuration.receiveBufferBytes = receiveBuffer
        configuration.eventLoop = eventLoop
        configuration.gatherInterval = gatherInterval
        configuration.rateLimit = rateLimit
        configuration.presencePeers = presencePeers
        configuration.presenceLimit = presenceLimit
        configuration.presenceInterval = presenceInterval
        configuration.keepHistory = keepHistory

        configuration.maxConnectionsPerAddress = maxConnectionsPerIp
        configuration.handshakeTimeout = handshakeTimeout
        configuration.pingInterval = pingInterval
        configuration.sessionIdle = sessionIdle
        configuration.sessionLimit = sessionLimit
        configuration.maxTimers = maxTimers
        configuration.historyRole = historyRole
        configuration.drainTimeout = drainTimeout
        configuration.tokens = try await auth.authority()
        configuration.privateParts = try PrivateParts(privatePattern)
        configuration.tlsCertificatePath = tlsCert
        configuration.tlsKeyPath = tlsKey
        configuration.compression = compression
        configuration.compressionMinimumBytes = compressMin

        let server = try SyncServer(
            configuration: configuration, storage: try await storage(app: served.name, logger: logger), logger: logger)
        let scheme = tlsCert == nil ? "ws" : "wss"
        let address = "\(scheme)://\(host):\(server.port)/rooms/ROOM"
        try await server.run(announcement: "lockstep: serving '\(served.name)' rooms on \(address)\n")
    }

    /// Where the rooms go, as the options say: PostgreSQL, the data directory's SQLite log, or memory.
    private func storage(app: String, logger: Logger) async throws -> ServerStorage {
        do throws(StorageError) {
            if let postgres {
                var options = PostgresRoomStorage.Configuration()
                options.operationTimeout = postgresTimeout
                options.peerLifetime = peerLifetime
                options.keepHistory = keepHistory
                return .shared(
                    try await PostgresRoomStorage(url: postgres, app: app, configuration: options, logger: logger))
            }
            return memory ? .memory : .local(try RoomLog(directory: data, sync: sync, app: app))
        } catch {
            throw ServerError(error)
        }
    }
}
