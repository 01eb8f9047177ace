import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepStorage

/// One room in one simulated server's memory, as ``SharedLogPipeline`` keeps it: the real engine (``RoomEngine``: the
/// store, session marks, timeline and views) and queue (``SharedRoomQueue``, with its ``SharedLogMachine``), and what
/// the write in flight holds back.
final class SimulatedRoom {
    /// What a room's turn applies.
    enum Input: BatchInput {
        /// A client's request on connection `connection`, of its session `session`.
        case request(SimulatedRequest, connection: Int, session: String)
        /// A timer of the server's book came due: `SyncServer.fire` in the room's turn.
        case timer(StoredTimer)
        /// The removal of a fired timer's row in a write of its own (only the mutant
        /// `firedTimerRowRemovedSeparately` makes one).
        case timerGone(String)

        /// The write reads the session's mark (an idempotency key's, for a request with one); a timer's row is read
        /// with the room's.
        var markName: String? {
            guard case .request(let request, _, let session) = self else { return nil }
            return request.idempotency?.markName ?? session
        }

        /// A request with an idempotency key comes as over HTTP, with no connection to send away: it is answered.
        var connection: Int? {
            guard case .request(let request, let connection, _) = self, request.key == nil else { return nil }
            return connection
        }

        /// A request with an idempotency key has no `seq` (its 0 is none).
        var sessionSeq: (session: String, seq: Int)? {
            guard case .request(let request, _, let session) = self, request.key == nil else { return nil }
            return (session, request.seq)
        }
    }

    typealias Reply = (connection: Int, frame: ServerFrame)

    /// What a write holds back until its commit.
    enum Held {
        /// A change as the room releases it: its message for the whole room, and as each view stream gets it.
        case patch(Room.LoggedPatch)
        case answer(connection: Int, ServerFrame)
    }

    /// Distinct for each time a server reads the room: tasks of a room dropped since do nothing.
    let id: Int
    /// The room's store and decisions: what the server's room holds.
    var engine: RoomEngine
    var name: String { engine.name }
    var queue = SharedRoomQueue<Input, Reply>()
    /// What the write being prepared or in flight stores and holds back: on a shared log the real per-room queue
    /// (`SharedRoomState.writes`); on a log of the server's own, what the last request made, handed to the server's
    /// queue at once (`ClusterSimulation.enqueue`).
    let writes = DurabilityQueue<SimulatedRelease>()
    /// On a shared log, the rows the write in flight stores (as `SharedRoomState.batchRows`): to take the batch back.
    var batchRows: [StoredChange] = []
    /// The state after each of the batch's rows, for the log's checks.
    var batchStates: [JSON] = []
    var batchMarks: [StoredMark] = []
    /// The ids of the requests the batch applied (whatever their outcome): what its session marks stand for.
    var batchRequests: [String] = []
    /// The batch's changes to the timer rows, in order.
    var batchTimerOps: [SimulatedLog.TimerOp] = []
    /// The batch's cancels, each with the number of timer ops before it: the log checks each took its row away.
    var batchCancels: [(name: String, at: Int)] = []
    /// Timers the batch fired without removing their rows (only under the mutant `firedTimerRowRemovedSeparately`).
    var firedAwaitingRemoval: [String] = []

    /// The resume window of the simulated servers (`--resume-window`): short, so that clients also miss more than
    /// it holds and get snapshots, and reverts read the log beyond the engine's timeline.
    static let resumeWindow = 6
    /// The simulated servers' marks never idle long enough to be deleted: every mark is kept.
    static let sessionWrites = SessionWrites(idleSeconds: 1e12, limit: 10_000)
    /// What the simulated servers' turns follow. No private part is guarded: the simulation's clients write where the
    /// app lets them (into another's hand, into the vault), so that what the fan-out hides is tested on every write.
    static let rules = RoomEngine.Rules(guarded: .none, sessionWrites: sessionWrites, maxTimers: 1_000)
    /// Connections answered (snapshot or resume), in join order.
    var connections: [Int] = []
    /// Snapshots of versions not released yet, by connection: each goes out with the release of its version (nil
    /// when sent at once, under a mutant), and its connection gets no patch up to it (`Session.synchronise`).
    var heldSnapshots: [Int: (version: Int, frame: ServerFrame?)] = [:]
    /// The transaction of the write the server waits for.
    var transaction: Int?
    /// The room's clients on other servers as published and read (the real exchange), and the presence state each
    /// connection of this server last set.
    var presence = PresenceExchange()
    var presenceStates: [Int: JSON] = [:]
    /// The step of the last notice of another server's peers, and of the last read of them at the database.
    var peersNoticedAt = -1
    var peersReadAt = -1

    /// Held back until the write that stores what came before it.
    func hold(_ held: Held) {
        writes.pending.append(SimulatedRelease(room: self, held: held))
    }

    /// The batch's rows, marks, requests and timer changes are done with: committed, taken back, or handed to the
    /// server's own log.
    func clearBatch() {
        batchRows = []
        batchStates = []
        batchMarks = []
        batchRequests = []
        batchTimerOps = []
        batchCancels = []
    }

    /// On a log of the server's own: what the log's checks need of the room's changes waiting for a write.
    var unwritten = LocalWrite.Checks()

    /// The decisions of the room's writes and catch-ups.
    var machine: SharedLogMachine {
        get { queue.machine }
        set { queue.machine = newValue }
    }

    init(id: Int, name: String, store: any RoomStore, recent: [Room.LoggedPatch], parts: PrivateParts) {
        self.id = id
        engine = RoomEngine(name: name, store: store, resumeWindow: Self.resumeWindow, recent: recent, parts: parts)
    }
}
