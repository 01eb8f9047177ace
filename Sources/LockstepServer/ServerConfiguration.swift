public import LockstepCore
import LockstepStorage
public import LockstepTransport

/// Everything a server can be told; each limit has a default a public deployment can live with.
public struct ServerConfiguration: Sendable {
    /// Address to listen on. Loopback unless told otherwise: with no auth secret, anyone who can
    /// reach the port can read and write every room.
    public var host = "127.0.0.1"
    /// TCP port for WebSocket and HTTP; 0 picks a free one (see ``SyncServer/port``).
    public var port = 8080
    /// The reducer every room runs.
    public var app: App
    /// Changes each room can undo.
    public var undoDepth = 1000
    /// Largest message a client may send, in bytes; larger ones get `too_large` and close 1009.
    public var maxFrameBytes = 1 << 20
    /// Bytes of a room's broadcasts a connection may leave unwritten; further behind, and with its socket taking
    /// nothing for `stallTimeout`, it stops receiving them and gets a fresh snapshot once it has drained.
    public var queueLimitBytes = 4 << 20
    /// How long a connection past `queueLimitBytes` may take nothing from its socket before it is resynchronised: a
    /// reader that drains a large burst (a group commit releases many patches at once) is not mistaken for a stalled
    /// one. The room's broadcasts of this long are the most a stalled reader holds beyond the queue limit.
    public var stallTimeout = Duration.seconds(1)
    /// How long a room with no clients stays in memory, with a data directory; it is then written out (a snapshot)
    /// and loaded again when it is next used. Rooms stay in memory with `--memory`.
    public var roomIdle = Duration.seconds(60)
    /// Bytes of a patch (and of an action) written to one audit line at the debug log level; the rest is cut.
    public var auditLimitBytes = 1_024
    /// Web pages (origins such as `https://app.example.com`) whose scripts may open WebSockets to this server, besides
    /// the server's own origin; `*` allows every page. A browser sends its page's origin with the handshake; a
    /// handshake from any other page is refused (403), so a site the user visits cannot reach a server on their
    /// machine. Clients that send no `Origin` (the SDKs, websocat) are not affected.
    public var allowedOrigins: [String] = []
    /// Patches each room keeps so clients can resume with `since=`.
    public var resumeWindow = 10_000
    /// The role needed for what acts on everyone's changes: global `undo`, `redo` and `revert` (`--history-role`).
    /// With `.admin`, writers may take back only their own changes (`undo mine`). Applies with tokens only.
    public var historyRole = AccessRole.write
    /// Open WebSocket connections the server accepts; further handshakes are refused. Nil: as many as the file
    /// descriptor limit allows, less 5 % (at least 8) kept for refusals, HTTP requests and storage.
    public var maxConnections: Int?
    /// Bytes libwebsockets reads into per connection at a time. Every connection holds a buffer of this size, so it
    /// is most of an idle connection's memory (4096 cost about 3.5 KiB more per connection than 512); a message
    /// larger than it arrives in several reads and is assembled, so it bounds nothing a client may send. Input that
    /// waits beyond one read is read again within the pass, up to 4 KiB, so a small buffer costs a fast writer no
    /// extra passes.
    public var receiveBufferBytes = 512
    /// How the transport's loop waits for sockets: `poll` (the default) costs every open connection on each pass and
    /// is the cheaper loop for busy rooms; `epoll` costs only the ready ones, for many mostly idle connections.
    public var eventLoop = EventLoopBackend.poll
    /// After a pass of the transport's loop that only read (a message or request in, nothing sent or asked to be sent),
    /// how long from its start the next pass waits for more input, so that many clients sending a little each (cursor
    /// moves, presence states) cost the loop one wake-up rather than one per message. A pass that sent anything (an
    /// answer, an ack, a patch) is followed at once, and work from other threads (a storage commit) ends the wait, so
    /// only input arriving right after a pass that only read waits, at most this. Zero: none.
    public var gatherInterval = Duration.milliseconds(1)
    /// While the process is out of file descriptors, at most one warning per this interval says so (with how many
    /// connections were refused since the last); the `lockstep_out_of_descriptors_total` metric counts every one.
    public var descriptorWarningInterval = Duration.seconds(10)
    /// Messages per second one connection may send (bursts up to one second's worth); 0 is unlimited.
    public var rateLimit = 1_000
    /// Most entries one `history` answer holds, and its size when the request names no limit.
    public var historyLimit = (max: 1_000, default: 20)
    /// Versions of each room's log kept behind its latest snapshot (for resuming clients and `history`).
    public var keepHistory = 10_000
    /// Changes between two stored snapshots of a room; bounds how much a restart replays.
    public var snapshotInterval = 1_000
    /// Peers a presence message lists at most (its `count` says how many there are in all); `changed` messages
    /// name only peers among them.
    public var presencePeers = 100
    /// Largest presence state a client may set, in bytes as the server writes it; a larger one is `too_large` (the
    /// connection stays).
    public var presenceLimit = 1_024
    /// Shortest time between two presence messages of a room, per 100 peers in it: joins, leaves and state changes
    /// in between are merged into one message showing the room as it is then (each client's latest state).
    public var presenceInterval = Duration.milliseconds(50)
    /// Verifies access tokens; nil lets every client read and write every room (fine on loopback only).
    public var tokens: TokenAuthority?
    /// Parts of every room that only their owner sees (`--private`), beside those the app declares; they need
    /// ``tokens``.
    public var privateParts = PrivateParts.none
    /// Open WebSocket connections from one peer address; further handshakes from it are refused.
    /// Loopback counts like any address, so a load test on one machine needs this above its client count.
    public var maxConnectionsPerAddress = 1_000
    /// Time a new TCP connection has to send its whole HTTP request (a handshake, or a GET) before
    /// it is closed, so half-sent requests cannot hold sockets; whole seconds, at least 1.
    public var handshakeTimeout = Duration.seconds(10)
    /// A WebSocket client that answered no ping for this long is pinged, and closed if it answers none within 10 s
    /// more: a client gone without a word (network lost, device asleep) leaves presence and frees its socket. Whole
    /// seconds, at least 1.
    public var pingInterval = Duration.seconds(300)
    /// Time after which a room forgets a client session that sent no numbered request (`seq`): a client that
    /// comes back later starts again from `seq` 0. The protocol promises at least an hour.
    public var sessionIdle = Duration.seconds(24 * 3_600)
    /// Session marks one room keeps; past it the least recently active session is forgotten.
    public var sessionLimit = 10_000
    /// Pending timers one room may hold; scheduling one more is `rejected`.
    public var maxTimers = 1_000
    /// How long a drain (``SyncServer/drain()``, on SIGTERM) may take: answering what was read, storing it, and
    /// closing every connection with 1001. Past it the server stops anyway.
    public var drainTimeout = Duration.seconds(10)
    /// A PEM certificate (chain) and its unencrypted PEM key: the port then speaks TLS only, `wss://` and `https://`.
    /// Both or neither.
    public var tlsCertificatePath: String?
    /// The unencrypted PEM key of ``tlsCertificatePath``.
    public var tlsKeyPath: String?
    /// Whether a client that offers permessage-deflate (RFC 7692) gets compressed frames; off, every client gets
    /// plain ones, whatever it offers.
    public var compression = true
    /// Messages to deflate clients shorter than this go uncompressed: deflating a few bytes saves little and costs
    /// a compression each.
    public var compressionMinimumBytes = 128

    /// Every setting at its default, which is also `lockstep serve`'s: served on 127.0.0.1:8080. Where rooms are kept
    /// is the server's ``ServerStorage``.
    public init(app: App) {
        self.app = app
    }
}

extension ServerConfiguration {
    /// How a write treats session marks: those idle past `--session-idle` go, and a room keeps `--session-limit`.
    var sessionWrites: SessionWrites {
        SessionWrites(idleSeconds: sessionIdle.seconds, limit: sessionLimit)
    }
}
