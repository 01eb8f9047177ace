import LockstepCore
import LockstepStorage
import LockstepTransport

/// What ``SharedLogPipeline`` keeps for one room in memory: its turns (``SharedRoomQueue``: what waits for the room's
/// next locked write, and the write in flight), what that write stores and holds back, and what the other servers
/// hold of the room. Loop-bound.
final class SharedRoomState {
    /// A reply, as the queue carries it to its requester.
    typealias Reply = (requester: any Requester, answer: RequestAnswer)

    /// What waits for the room's next locked write, the batch in flight, and the decisions about both.
    var queue = SharedRoomQueue<RoomInput, Reply>()
    /// The changes, marks and replies of the write being prepared or in flight.
    let writes = DurabilityQueue<RoomRelease>()
    /// What the write in flight stores: enough, with the history's checkpoint, to take the batch back.
    var batchRows: [StoredChange] = []
    var batchMarks: [StoredMark] = []
    var batchEpoch = false
    /// The room's clients on the other servers, as read.
    var presence = PresenceExchange()

    /// Nothing this server received waits to be applied, written or answered.
    var isSettled: Bool { queue.machine.isSettled(writesIdle: writes.isIdle) }

    /// Nothing waits or runs.
    var isIdle: Bool { queue.machine.isIdle }
}

@available(*, unavailable)
extension SharedRoomState: Sendable {}
