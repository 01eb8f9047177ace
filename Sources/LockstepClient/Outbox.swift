import LockstepCore
import LockstepJSON

/// The change requests a ``RoomClient`` sent or will send, until each is answered.
///
/// Each request gets its `seq` when it first goes out, so numbers follow the order on the wire and start above
/// the mark a reused session already has. A request the server's mark covers was applied: it is never sent again.
/// Loop-free bookkeeping; the client actor owns it. With a ``KeepDirectory`` its entries outlive the process: those
/// restored from a kept file have no waiter (their `send` ended with the old process) and are answered silently.
struct Outbox {
    /// How the server answered a request: applied (an `ack`, or the session's mark covering it), or a timer
    /// scheduled or cancelled (`scheduled`).
    enum Answer {
        case applied(version: Int)
        case scheduled(timer: String, due: Int?)
    }

    /// One unanswered change request.
    struct Entry {
        let id: String
        let message: ClientMessage
        /// An action's `after` and `timer`: the server applies it later, so it is never predicted.
        let timer: TimerRequest?
        /// The `send` waiting for the answer; nil for a request restored from a kept file.
        var waiter: CheckedContinuation<Result<Answer, RoomClientError>, Never>?
        /// Set when the request first goes out.
        var seq: Int?
        /// Sent on the current connection.
        var sent = false
        /// The server's mark covers it: applied, to be answered without sending it again.
        var covered = false
        /// The version whose patch (or snapshot) put its change in the mirror: no longer predicted.
        var mirroredAt: Int?
        var mirrored: Bool { mirroredAt != nil }

        init(
            id: String, message: ClientMessage, timer: TimerRequest? = nil,
            waiter: CheckedContinuation<Result<Answer, RoomClientError>, Never>?
        ) {
            self.id = id
            self.message = message
            self.timer = timer
            self.waiter = waiter
        }
    }

    private(set) var entries: [Entry] = []
    /// Most requests waiting at once; further sends fail with ``RoomClientError/outboxFull(limit:)``.
    let limit: Int
    /// The `seq` the next request to go out gets.
    private(set) var nextSeq = 1

    init(limit: Int) {
        self.limit = limit
    }

    var isFull: Bool { entries.count >= limit }
    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The actions not yet in the mirror, in order: what a prediction applies over the confirmed state.
    var predictedActions: [JSON] {
        entries.compactMap { entry in
            guard !entry.mirrored, entry.timer == nil, case .action(_, let action) = entry.message else { return nil }
            return action
        }
    }

    mutating func append(_ entry: Entry) {
        entries.append(entry)
    }

    /// Puts back the requests of a kept file, numbered as they were, so those the server applied are recognised.
    mutating func restore(_ kept: [KeptRoom.Request], nextSeq: Int, keptVersion: Int) {
        for request in kept {
            var entry = Entry(id: request.id, message: request.message, timer: request.timer, waiter: nil)
            entry.seq = request.seq
            if let at = request.mirroredAt, at <= keptVersion { entry.mirroredAt = at }
            entries.append(entry)
        }
        self.nextSeq = max(self.nextSeq, nextSeq)
    }

    /// The requests as a kept file holds them.
    var kept: [KeptRoom.Request] {
        entries.map {
            KeptRoom.Request(id: $0.id, message: $0.message, timer: $0.timer, seq: $0.seq, mirroredAt: $0.mirroredAt)
        }
    }

    /// Gives a `seq` to every request about to go out for the first time; true when some got one (a kept file must
    /// record the numbers before the requests leave).
    mutating func number() -> Bool {
        var numbered = false
        for index in entries.indices where entries[index].seq == nil && !entries[index].covered {
            entries[index].seq = nextSeq
            nextSeq += 1
            numbered = true
        }
        return numbered
    }

    /// The frames of the requests not yet sent on this connection, numbering those sent for the first time.
    mutating func framesToSend() -> [[UInt8]] {
        _ = number()
        var frames: [[UInt8]] = []
        for index in entries.indices where !entries[index].sent && !entries[index].covered {
            entries[index].sent = true
            let entry = entries[index]
            frames.append(ClientRequest(message: entry.message, seq: entry.seq, timer: entry.timer).json.serialized())
        }
        return frames
    }

    /// A new connection synced with the session's mark `seq` (0 from a server that keeps none): requests at or
    /// below it were applied; the others go out again, in order. Returns whether some are now covered.
    mutating func synced(mark: Int, snapshot: Bool, version: Int) -> Bool {
        nextSeq = max(nextSeq, mark + 1)
        var covered = false
        for index in entries.indices {
            entries[index].sent = false
            if let seq = entries[index].seq, seq <= mark {
                entries[index].covered = true
                covered = true
                if snapshot, entries[index].mirroredAt == nil { entries[index].mirroredAt = version }
            }
        }
        return covered
    }

    /// Marks the request `id` as mirrored: its patch, of `version`, arrived.
    mutating func mirrored(id: String, at version: Int) {
        if let index = entries.firstIndex(where: { $0.id == id }) { entries[index].mirroredAt = version }
    }

    /// The request `id` was not applied on this connection: it goes out again with the next frames to send. False
    /// when it is not in the outbox.
    mutating func sendAgain(id: String) -> Bool {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return false }
        entries[index].sent = false
        return true
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

    /// Removes the requests restored from a kept file (they have no waiter); returns how many there were.
    mutating func removeRestored() -> Int {
        let count = entries.count { $0.waiter == nil }
        entries.removeAll { $0.waiter == nil }
        return count
    }

    mutating func removeAll() -> [Entry] {
        defer { entries.removeAll() }
        return entries
    }
}
