import LockstepJSON
import LockstepStorage

/// One room's part of a group commit to a server's own log: what it stores, and what it holds back until then.
struct LocalBatch {
    let room: SimulatedRoom
    var rows: [StoredChange]
    /// The state after each row, for the log's checks.
    var states: [JSON]
    var marks: [StoredMark]
    var requests: [String]
    var timerOps: [SimulatedLog.TimerOp]
    var cancels: [(name: String, at: Int)]
    var held: [SimulatedRoom.Held]

    /// Stores something of the room: a failed write then drops the room (`DurabilityQueue.rooms(of:sessions:)`).
    var touchesRoom: Bool { !rows.isEmpty || !marks.isEmpty || !timerOps.isEmpty }
}
