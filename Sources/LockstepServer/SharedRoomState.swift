import LockstepCore
import LockstepStorage
import LockstepTransport

/// What ``SharedLogPipeline`` keeps for one room in memory: the decisions of its writes and catch-ups
/// (``SharedLogMachine``), and what they act on: the requests waiting for the room's next locked write, the write in
/// flight, and what the other servers hold of the room. Loop-bound.
final class SharedRoomState {
    /// Something to apply, or to send, in its turn: after everything the room received before it.
    enum Incoming {
        case input(RoomInput)
        case reply(any Requester, RequestAnswer)

        /// A change request, an effect's action or a timer: it needs a write.
        var needsWrite: Bool {
            if case .reply = self { return false }
            return true
        }

        var markName: String? {
            guard case .input(let input) = self else { return nil }
            return input.markName
        }
    }

    /// When the room writes, catches up, answers and takes back.
    var machine = SharedLogMachine()
    /// The changes, marks and replies of the write being prepared or in flight.
    let writes = DurabilityQueue()
    /// Received, not yet applied: the next write takes all of it.
    var incoming: [Incoming] = []
    /// What the write in flight took from `incoming`.
    var batch: [Incoming] = []
    /// What the write in flight stores: enough, with the history's checkpoint, to take the batch back.
    var batchRows: [StoredChange] = []
    var batchMarks: [StoredMark] = []
    var batchEpoch = false
    /// The room's clients on this server as published, and on the others as read.
    var presence = PresenceExchange()

    /// Nothing this server received waits to be applied, written or answered.
    var isSettled: Bool { machine.isSettled(writesIdle: writes.isIdle) }

    /// Nothing waits or runs.
    var isIdle: Bool { machine.isIdle }
}

@available(*, unavailable)
extension SharedRoomState: Sendable {}
