public import LockstepCore

/// Storage that several servers share (PostgreSQL), so that any of them serves any room.
///
/// The storage decides each room's order of versions: a server commits a room's next changes only while it holds
/// the room against every other server, after applying everything they committed before. Every server hears of every
/// commit (``events()``) and sends its own clients the stored bytes, so all clients see the same patches.
///
/// The ``RoomStorage`` methods block the calling thread until the database answers: call them off the server's loop.
public protocol SharedRoomStorage: RoomStorage {
    /// This server's number among every server that ever used the storage; client ids carry it, so they are distinct
    /// within a room whichever server a client is on.
    var node: Int { get }

    /// False while the database cannot be reached: the server then applies nothing and says it is unavailable.
    var isAvailable: Bool { get }

    /// Commits `room`'s next changes in one transaction, holding the room against every other server's writes.
    ///
    /// `version` is the version this server holds. `prepare` receives the changes other servers committed after it,
    /// oldest first; it applies them, then what waits to be applied, and returns what to store. That is committed,
    /// and announced to every server, before `write` returns. Throws, having committed nothing or possibly what
    /// `prepare` returned when the connection was lost at the commit, if the database cannot be reached.
    func write(
        room: String, after version: Int, prepare: @escaping @Sendable ([StoredChange]) async -> RoomWrite
    ) async throws(StorageError)

    /// What other servers commit and publish, as it happens, until ``RoomStorage/close()``. Call once.
    func events() -> AsyncStream<StorageEvent>

    /// Publishes this server's clients in `room`, replacing what it published before; none withdraws them. They stay
    /// listed while this server runs, and leave every list within ``peerLifetime`` after it stops.
    func publish(peers: [Peer], room: String) async throws(StorageError)

    /// The clients of `room` on the other servers that are alive.
    func remotePeers(room: String) async throws(StorageError) -> [Peer]

    /// How long the peers of a server that stopped without withdrawing them (killed, cut off) stay listed.
    var peerLifetime: Duration { get }
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
