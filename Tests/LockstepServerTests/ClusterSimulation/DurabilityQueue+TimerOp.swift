@testable import LockstepServer
import LockstepStorage

extension DurabilityQueue {
    /// One of a simulated batch's timer changes, as `SyncServer` hands it to its pipeline: a row scheduled, or the
    /// name's row gone.
    func timerChanged(_ op: SimulatedLog.TimerOp, in room: String) {
        if let timer = op.timer {
            timersChanged(scheduled: [timer], gone: [])
        } else {
            timersChanged(scheduled: [], gone: [TimerKey(room: room, name: op.name)])
        }
    }
}
