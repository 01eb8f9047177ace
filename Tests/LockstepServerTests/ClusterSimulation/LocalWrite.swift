import LockstepJSON
import LockstepStorage

/// A write to a server's own log in flight: what the real ``DurabilityQueue`` handed over, and per room what the
/// log's checks need besides.
struct LocalWrite {
    /// What a room's requests made since its last write, as the checks of the simulated log take it.
    struct Checks {
        /// The state after each of the room's rows.
        var states: [JSON] = []
        /// The requests applied, whatever they came to.
        var requests: [String] = []
        /// The room's changes to its timer rows in the order it made them, and its cancels, each after its own op.
        var timerOps: [SimulatedLog.TimerOp] = []
        var cancels: [(name: String, at: Int)] = []

        var isEmpty: Bool { states.isEmpty && requests.isEmpty && timerOps.isEmpty }
        /// Changes or timer rows wait: a request refused (nothing to store) waits only for the next write.
        var holdsChanges: Bool { !states.isEmpty || !timerOps.isEmpty }
    }

    let rows: [StoredChange]
    let sessions: SessionWrites
    let checks: [String: Checks]
}
