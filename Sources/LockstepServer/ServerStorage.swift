public import LockstepStorage

/// Where a server keeps its rooms: chosen once, when it is made, and the one place the choice is read.
///
/// The server imports no storage engine: `lockstep serve` (or an app that embeds the server) opens the SQLite log
/// (`LockstepSQLite`'s `RoomLog`) or the PostgreSQL storage (`LockstepPostgres`) and hands it over here.
public enum ServerStorage: Sendable {
    /// Rooms in memory only (`lockstep serve --memory`): a restart loses them, and an ack means the change is applied.
    case memory
    /// Rooms in a log of this server's own, such as the SQLite file of `lockstep serve --data DIR`: an ack means the
    /// change is stored there.
    case local(any RoomStorage)
    /// Rooms in a database several servers share (`lockstep serve --postgres URL`): an ack means the change is
    /// committed there, and every server serves every room.
    case shared(any SharedRoomStorage)

    /// The storage to close when the server stops; nil in memory.
    var closable: (any RoomStorage)? {
        switch self {
        case .memory: nil
        case .local(let log): log
        case .shared(let storage): storage
        }
    }

    /// The path of every change to this storage and the wire.
    func makePipeline() -> any CommitPipeline {
        switch self {
        case .memory: MemoryPipeline()
        case .local(let log): LocalLogPipeline(log: log)
        case .shared(let storage): SharedLogPipeline(storage: storage)
        }
    }

    /// How the server's start is logged.
    var label: String {
        switch self {
        case .memory: "memory"
        case .local(let log): "\(log)"
        case .shared: "shared"
        }
    }
}
