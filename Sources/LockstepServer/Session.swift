import DequeModule
import LockstepCore
import LockstepTransport

/// One client connection in one room, as the server sees it.
///
/// Loop-bound: touched only by ``SyncServer`` on the transport's thread.
final class Session {
    let connection: WebSocketConnection
    /// The server-assigned id (`you`, `cause.client`).
    let client: String
    let name: String
    let room: Room
    /// Whether the client may change the room (a `read` token may not).
    let canWrite: Bool
    var limiter: RateLimiter
    /// The version this client's mirror has reached; patches up to it are not sent again.
    var syncedVersion: Int
    /// True once a queue overflow dropped patches: the client gets a fresh snapshot when it drains.
    private(set) var needsSnapshot = false
    /// Replies (acks, errors, history) held back until the snapshot is queued.
    private var owed: [OutboundFrame] = []
    /// Replies handed to the transport that may not have left yet, each with the connection's byte position at
    /// its end; an overflow that drops the queue keeps those still in it.
    private var repliesInQueue: Deque<(frame: OutboundFrame, end: Int)> = []
    private let queueLimit: Int

    init(connection: WebSocketConnection, client: String, name: String, room: Room, canWrite: Bool,
         rateLimit: Int, queueLimit: Int) {
        self.connection = connection
        self.client = client
        self.name = name
        self.room = room
        self.canWrite = canWrite
        self.limiter = RateLimiter(perSecond: rateLimit)
        self.syncedVersion = room.releasedVersion
        self.queueLimit = queueLimit
    }

    var peer: Peer { Peer(client: client, name: name) }

    /// Queues a reply to this client: never dropped, and after the snapshot if one is owed.
    func reply(_ frame: OutboundFrame) {
        if needsSnapshot {
            owed.append(frame)
        } else {
            forgetSentReplies()
            connection.send(frame)
            repliesInQueue.append((frame, connection.writtenBytes + connection.queuedBytes))
        }
    }

    /// Queues a broadcast frame (patch, presence); returns false if the queue overflowed instead.
    ///
    /// Past the queue limit every queued broadcast is dropped and the client is marked to get one
    /// fresh snapshot when it drains, so it never sees a gap and never slows the room down.
    @discardableResult
    func broadcast(_ frame: OutboundFrame) -> Bool {
        guard !needsSnapshot else { return false }
        guard connection.queuedBytes + frame.byteCount <= queueLimit else {
            forgetSentReplies()
            owed = repliesInQueue.map(\.frame)
            repliesInQueue.removeAll()
            connection.discardQueue()
            connection.notifyWhenDrained()
            needsSnapshot = true
            return false
        }
        connection.send(frame)
        return true
    }

    /// The transport wrote everything queued; returns true if a snapshot is now owed.
    func drained() -> Bool {
        forgetSentReplies()
        return needsSnapshot
    }

    /// Drops the replies the connection has handed to the socket.
    private func forgetSentReplies() {
        while let first = repliesInQueue.first, first.end <= connection.writtenBytes { repliesInQueue.removeFirst() }
    }

    /// Queues the owed snapshot, then the replies held back for it.
    func resynchronise(with snapshot: OutboundFrame, at version: Int, presence: OutboundFrame) {
        needsSnapshot = false
        syncedVersion = version
        connection.send(snapshot)
        let held = owed
        owed.removeAll()
        for frame in held { reply(frame) }
        connection.send(presence)
    }
}

@available(*, unavailable)
extension Session: Sendable {}
