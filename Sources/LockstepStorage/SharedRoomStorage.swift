public import LockstepCore

/// Storage that several servers share (PostgreSQL), so that any of them serves any room.
///
/// The storage decides each room's order of versions: a server commits a room's next changes only while it holds
/// the room against every other server, after applying everything they committed before. Every server hears of every
/// commit (``events()``, or ``versions(of:)`` when the notice of a server that died just after committing was never
/// sent) and sends its own clients the stored bytes, so all clients see the same patches.
///
/// Its own calls are `@concurrent`: they run on the task pool, as the database driver does.
public protocol SharedRoomStorage: RoomStorage {
    /// This server's number among every server that ever used the storage; client ids carry it, so they are distinct
    /// within a room whichever server a client is on.
    var node: Int { get }

    /// False while the database cannot be reached: the server then applies nothing and says it is unavailable.
    var isAvailable: Bool { get }

    /// Commits `room`'s next changes in one transaction, holding the room against every other server's writes.
    ///
    /// `version` is the version this server holds; `sessions` name the client sessions whose requests are about to
    /// be applied. `prepare` receives what other servers committed after `version` (and those sessions' marks and the
    /// room's epoch, as stored); it applies that, then what waits to be applied, and returns what to store. That is
    /// committed before `write` returns, and announced to every other server just after. Throws if the database cannot
    /// be reached: then nothing was committed, or (the connection lost at the commit itself,
    /// ``StorageError/uncertain``) possibly what `prepare` returned; if that lands after all, this server's
    /// ``events()`` announce it too.
    @concurrent func write(
        room: String, after version: Int, sessions: [String],
        prepare: @escaping @concurrent @Sendable (RoomCatchUp) async -> RoomWrite
    ) async throws(StorageError)

    /// Makes `room` exist in the storage, named `epoch` unless another server made it first; returns the epoch stored.
    ///
    /// One atomic step in the database: of servers first using a room at the same moment, one wins and every other
    /// adopts what it stored, so a room has one epoch on every server and every server can answer for it.
    @concurrent func claim(room: String, epoch: String) async throws(StorageError) -> String

    /// What other servers commit and publish, as it happens, until ``RoomStorage/close()``. Call once.
    func events() -> AsyncStream<StorageEvent>

    /// The latest committed version of each of `rooms` that exists, in one call: a server compares them with what it
    /// holds now and then, since a server that dies between a commit and its notice never announces that commit.
    @concurrent func versions(of rooms: [String]) async throws(StorageError) -> [String: Int]

    /// Publishes this server's clients in `room`, replacing what it published before; none withdraws them. They stay
    /// listed while this server runs, and leave every list within ``peerLifetime`` after it stops.
    @concurrent func publish(peers: [Peer], room: String) async throws(StorageError)

    /// The clients of `room` on the other servers that are alive.
    @concurrent func remotePeers(room: String) async throws(StorageError) -> [Peer]

    /// How long the peers of a server that stopped without withdrawing them (killed, cut off) stay listed.
    var peerLifetime: Duration { get }
}

/// What a locked write finds stored, for the server to apply before its own changes.
public struct RoomCatchUp: Sendable {
    /// Changes other servers committed after the writer's version, oldest first.
    public var missed: [StoredChange]
    /// The stored marks of the sessions the write named.
    public var marks: [StoredMark]
    /// The room's stored epoch; nil until a write stores one.
    public var epoch: String?
    /// The order of each pending timer the write named (`timer:NAME` among its sessions) that is still stored: a
    /// timer that is not was fired or cancelled through another server.
    public var timers: [String: Int]

    public init(missed: [StoredChange], marks: [StoredMark], epoch: String?, timers: [String: Int] = [:]) {
        self.missed = missed
        self.marks = marks
        self.epoch = epoch
        self.timers = timers
    }
}

/// What one locked write of a room stores, in one transaction.
public struct RoomWrite: Sendable {
    /// New changes, oldest first, continuing from the version the storage holds.
    public var changes: [StoredChange]
    public var snapshots: [StoredSnapshot]
    /// Session marks and the room's epoch.
    public var sessions: SessionWrites

    public init(changes: [StoredChange], snapshots: [StoredSnapshot], sessions: SessionWrites) {
        self.changes = changes
        self.snapshots = snapshots
        self.sessions = sessions
    }
}

/// What a server learns from the others through ``SharedRoomStorage/events()``.
public enum StorageEvent: Sendable, Equatable {
    /// A server committed `room` up to `version`.
    case committed(room: String, version: Int)
    /// A server published a new list of its clients in `room`.
    case peersChanged(room: String)
    /// Events may have been missed (the connection that listens for them was lost and is back): every room this
    /// server holds must be checked against the database.
    case resynchronise
}
