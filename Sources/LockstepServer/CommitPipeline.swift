import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// The path of a room's changes from the reducer to the wire, and the one part of the server that knows where rooms
/// are kept.
///
/// The server receives a request and hands it to ``submit(_:to:server:)``; the pipeline reports its turn
/// (``PipelineEvent/turn(_:_:)``) at once, or in the room's next locked write when servers share the storage. What the
/// reducer produced comes back through ``commit(_:message:record:in:server:)`` and ``reply(_:to:server:)``, and the
/// pipeline reports it released (``PipelineEvent/released(_:)``) in order once what precedes it is durable. It
/// reports everything else it learns as a ``PipelineEvent`` too, and never calls into the server otherwise. One implementation per storage, chosen once when the server starts:
/// ``MemoryPipeline``, ``LocalLogPipeline`` (SQLite) and ``SharedLogPipeline`` (PostgreSQL).
///
/// Loop-bound: every call is isolated to the server, whose executor is the transport's loop.
protocol CommitPipeline: AnyObject {
    /// False while changes cannot be committed (the database is unreachable): requests get `unavailable`, and
    /// `/healthz` answers 503.
    var isAvailable: Bool { get }
    /// Every request handed over has been answered (its ack or error is queued on its connection) and nothing waits
    /// to be stored: a draining server may say goodbye.
    var isSettled: Bool { get }
    /// Whether idle rooms leave memory: true when storage can give them back.
    var evictsIdleRooms: Bool { get }
    /// The id (`you`) of the server's `number`th client, distinct among every client of a room.
    func clientID(_ number: Int) -> String

    /// Starts what the pipeline does on its own, such as following what other servers commit.
    func start(server: isolated some RoomHost)
    /// Takes a change request or an effect's action for `room`, and reports its turn (``PipelineEvent/turn(_:_:)``)
    /// now or in the room's next locked write.
    func submit(_ input: RoomInput, to room: Room, server: isolated some RoomHost)
    /// A change the server applied: its patch leaves, after everything before it, once it is stored.
    func commit(
        _ patch: Room.LoggedPatch, message: [UInt8], record: ChangeRecord, in room: Room,
        server: isolated some RoomHost)
    /// A session's mark moved with a request just applied; the request's ack waits until it is stored.
    func markMoved(_ mark: StoredMark, in room: Room, server: isolated some RoomHost)
    /// An answer to one requester: it leaves after every patch and answer its room holds back before it.
    func reply(_ answer: RequestAnswer, to requester: any Requester, server: isolated some RoomHost)
    /// Nothing of `room` waits in the pipeline or is being written.
    func isIdle(_ room: Room) -> Bool
    /// Has an idle room leave memory (``PipelineEvent/evictable(_:version:)``) once everything of it is stored.
    func evict(_ room: Room, server: isolated some RoomHost)
    /// `room` left memory: the pipeline forgets what it kept for it.
    func forget(_ room: Room)
    /// The room's clients changed.
    func peersChanged(in room: Room, server: isolated some RoomHost)
    /// The clients of `room` on other servers.
    func remotePeers(of room: Room) -> [Peer]
    /// Timers scheduled and gone (fired or cancelled) in `room`: stored with the room's next write, in the same
    /// transaction as the change a fired timer made.
    func timersChanged(scheduled: [StoredTimer], gone: [TimerKey], in room: Room, server: isolated some RoomHost)
    /// The stored timers due by `due` (milliseconds since the Unix epoch), or of one room; nil without storage or when
    /// it cannot be read.
    func pendingTimers(dueBy due: Int, server: isolated some RoomHost) async -> [StoredTimer]?
    func pendingTimers(in room: String, server: isolated some RoomHost) async -> [StoredTimer]?
    /// How often other servers' timers are read from storage; nil where this server alone schedules them.
    var timerPoll: Duration? { get }

    /// Reads a room not in memory; a client joining it (`creating`) makes it exist. ``StoredRoomImage/none`` for a room
    /// never stored.
    func read(
        room: String, creating: Bool, server: isolated some RoomHost
    ) async -> Result<StoredRoomImage, StorageError>
    /// A room read by ``read(room:creating:server:)`` is now in memory.
    func installed(_ room: Room, server: isolated some RoomHost)
    /// Brings a room in memory up to what storage has before a client joins it (with `session`'s stored mark) or an
    /// HTTP read answers from it (no session); false when it cannot, and the client is then refused rather than sent
    /// an older state than its own.
    func prepareJoin(of room: Room, session: String?, server: isolated some RoomHost) async -> Bool
    /// A page of the stored changes of `room` (time travel, recordings); none in memory.
    func storedChanges(
        room: String, after version: Int, through last: Int, limit: Int, server: isolated some RoomHost
    ) async throws(StorageError) -> [StoredChange]
    /// The oldest version of `room` storage has a change for; nil when none (or in memory).
    func oldestStoredChange(room: String, server: isolated some RoomHost) async -> Int?
}

/// What a pipeline of a server that alone holds its rooms does: requests are applied at once, and there are no other
/// servers to follow or tell.
extension CommitPipeline {
    func clientID(_ number: Int) -> String { "c\(number)" }
    func start(server: isolated some RoomHost) {}
    func submit(_ input: RoomInput, to room: Room, server: isolated some RoomHost) { server.handle(.turn(input, room)) }
    func isIdle(_ room: Room) -> Bool { true }
    func forget(_ room: Room) {}
    func peersChanged(in room: Room, server: isolated some RoomHost) {}
    func remotePeers(of room: Room) -> [Peer] { [] }
    var timerPoll: Duration? { nil }
    func installed(_ room: Room, server: isolated some RoomHost) {}
    func prepareJoin(of room: Room, session: String?, server: isolated some RoomHost) async -> Bool { true }
}

/// A pipeline with a log to read history from.
protocol LoggingPipeline: CommitPipeline {
    var log: any RoomStorage { get }
}

extension LoggingPipeline {
    func pendingTimers(dueBy due: Int, server: isolated some RoomHost) async -> [StoredTimer]? {
        try? await log.timers(dueBy: due)
    }

    func pendingTimers(in room: String, server: isolated some RoomHost) async -> [StoredTimer]? {
        try? await log.timers(room: room)
    }

    func storedChanges(
        room: String, after version: Int, through last: Int, limit: Int, server: isolated some RoomHost
    ) async throws(StorageError) -> [StoredChange] {
        try await log.changes(room: room, after: version, through: last, limit: limit)
    }

    func oldestStoredChange(room: String, server: isolated some RoomHost) async -> Int? {
        try? await log.oldestChange(room: room)
    }
}
