import LockstepCore
import LockstepJSON

/// The change requests a ``RoomClient`` sent or will send, until each is answered.
///
/// Each request gets its `seq` when it first goes out, so numbers follow the order on the wire and start above
/// the mark a reused session already has. A request the server's mark covers was applied: it is never sent again.
/// Loop-free bookkeeping; the client actor owns it.
struct Outbox {
    /// One unanswered change request.
    struct Entry {
        let id: String
        let message: ClientMessage
        let waiter: CheckedContinuation<Result<Int, RoomClientError>, Never>
        /// Set when the request first goes out.
        var seq: Int?
        /// Sent on the current connection.
        var sent = false
        /// The server's mark covers it: applied, to be answered without sending it again.
        var covered = false
        /// Its change is in the mirror (its patch arrived, or a snapshot covers it): no longer predicted.
        var mirrored = false
    }

    private(set) var entries: [Entry] = []
    /// Most requests waiting at once; further sends fail with ``RoomClientError/outboxFull(limit:)``.
    let limit: Int
    private var nextSeq = 1

    init(limit: Int) {
        self.limit = limit
    }

    var isFull: Bool { entries.count >= limit }
    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The actions not yet in the mirror, in order: what a prediction applies over the confirmed state.
    var predictedActions: [JSON] {
        entries.compactMap { entry in
            guard !entry.mirrored, case .action(_, let action) = entry.message else { return nil }
            return action
        }
    }

    mutating func append(_ entry: Entry) {
        entries.append(entry)
    }

    /// The frames of the requests not yet sent on this connection, numbering those sent for the first time.
    mutating func framesToSend() -> [[UInt8]] {
        var frames: [[UInt8]] = []
        for index in entries.indices where !entries[index].sent && !entries[index].covered {
            if entries[index].seq == nil {
                entries[index].seq = nextSeq
                nextSeq += 1
            }
            entries[index].sent = true
            frames.append(ClientRequest(message: entries[index].message, seq: entries[index].seq).json.serialized())
        }
        return frames
    }

    /// A new connection synced with the session's mark `seq` (0 from a server that keeps none): requests at or
    /// below it were applied; the others go out again, in order. Returns whether some are now covered.
    mutating func synced(mark: Int, snapshot: Bool) -> Bool {
        nextSeq = max(nextSeq, mark + 1)
        var covered = false
        for index in entries.indices {
            entries[index].sent = false
            if let seq = entries[index].seq, seq <= mark {
                entries[index].covered = true
                covered = true
                if snapshot { entries[index].mirrored = true }
            }
        }
        return covered
    }

    /// Marks the request `id` as mirrored: its patch arrived.
    mutating func mirrored(id: String) {
        if let index = entries.firstIndex(where: { $0.id == id }) { entries[index].mirrored = true }
    }

    /// Removes and returns the request `id`.
    mutating func remove(id: String) -> Entry? {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
        return entries.remove(at: index)
    }

    /// Removes and returns the requests the mark covered.
    mutating func removeCovered() -> [Entry] {
        let covered = entries.filter(\.covered)
        entries.removeAll(where: \.covered)
        return covered
    }

    mutating func removeAll() -> [Entry] {
        defer { entries.removeAll() }
        return entries
    }
}
