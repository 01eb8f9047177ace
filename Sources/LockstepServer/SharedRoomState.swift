import LockstepCore
import LockstepStorage
import LockstepTransport

/// What ``SharedLogPipeline`` keeps for one room in memory: the requests waiting for the room's next locked write,
/// the write in flight, and what the other servers hold of it. Loop-bound.
final class SharedRoomState {
    /// Something to apply, or to send, in its turn: after everything the room received before it.
    enum Incoming {
        case input(RoomInput)
        case reply(any Requester, RequestAnswer)

        /// A change request or an effect's action: it needs a write.
        var needsWrite: Bool {
            if case .reply = self { return false }
            return true
        }

        var markName: String? {
            guard case .input(let input) = self else { return nil }
            return input.markName
        }
    }

    /// The changes, marks and replies of the write being prepared or in flight.
    let writes = DurabilityQueue()
    /// Received, not yet applied: the next write takes all of it.
    var incoming: [Incoming] = []
    /// What the write in flight took from `incoming`.
    var batch: [Incoming] = []
    /// What the write in flight stores, and the room as it was before the batch: enough to take the batch back.
    var batchRows: [StoredChange] = []
    var batchMarks: [StoredMark] = []
    var batchEpoch = false
    var before: (version: Int, history: History)?
    /// The number of the write in flight, until it ends: a locked write the server has given up on (past its
    /// deadline) may still reach its `prepare`, which must then apply nothing.
    var writing: Int?
    var attempts = 0
    /// The batch is being applied: replies go with the write, not to `incoming`.
    var preparing = false
    /// The room's writes and catch-ups are running (one at a time per room).
    var pumping = false
    /// Other servers' commits are being read beside a write of the room's own.
    var following = false
    /// The newest version other servers announced.
    var announced = 0
    /// The database must be asked what the room missed (it was loaded, or notices may have been lost).
    var needsCheck = false
    /// This server's clients of the room as last published, and a publication is due or running.
    var publishedPeers: [Peer] = []
    var publishing = false
    /// The clients of the room on other servers, as last read.
    var remotePeers: [Peer] = []
    var readingPeers = false
    /// Other servers published while the room's peers were being read: they are read again.
    var peersStale = false

    /// Something waits: a write, a reply, or versions other servers committed.
    func isBehind(version: Int) -> Bool { needsCheck || announced > version }

    /// Nothing this server received waits to be applied, written or answered.
    var isSettled: Bool { incoming.isEmpty && writing == nil && writes.isIdle }

    /// Nothing waits or runs.
    var isIdle: Bool { !pumping && !following && incoming.isEmpty }
}

@available(*, unavailable)
extension SharedRoomState: Sendable {}
