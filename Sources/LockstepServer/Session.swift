import DequeModule
import LockstepCore
import LockstepJSON
import LockstepTransport

/// One client connection in one room, as the server sees it.
///
/// Patches and presence reach the client through the room's stream, which its connection follows; replies (acks,
/// errors, history, snapshots) are sent to it alone, in order with the stream.
///
/// Loop-bound: touched only by ``SyncServer`` on the transport's thread.
final class Session: Requester {
    let connection: WebSocketConnection
    /// The server-assigned id (`you`, `cause.client`).
    let client: String
    let name: String
    let room: Room
    /// Whether the client may change the room (a `read` token may not).
    let canWrite: Bool
    /// The token's subject and role, for causes and the reducer's context; nil without tokens.
    let subject: String?
    let role: AccessRole?
    /// What the client sees: the whole room (no `path=`, or the empty pointer, and no private parts) or a view.
    let sight: any RoomSight
    var limiter: RateLimiter
    /// The version this client's mirror has reached (its snapshot's, or its resume's); patches up to it are not
    /// sent again.
    var syncedVersion: Int
    /// True once the client fell behind its stream: it gets a fresh snapshot when its socket drains.
    private(set) var needsSnapshot = false
    /// A snapshot of a version the room has not released yet (its changes are still being stored), held until it
    /// has: a crash before then would take back what it shows, and the client would resume from a state that never
    /// was.
    private var heldSnapshot: OutboundFrame?
    /// Replies (acks, errors, history) held back until the snapshot is queued.
    private var owed: [OutboundFrame] = []
    /// Replies handed to the transport that may not have left yet, each with the connection's `sentBytes` at its
    /// end; falling behind drops the queue but keeps those still in it.
    private var repliesInQueue: Deque<(frame: OutboundFrame, end: Int)> = []

    init(
        connection: WebSocketConnection, client: String, name: String, room: Room, grant: AccessGrant?,
        limiter: RateLimiter, redacting: Bool = false
    ) {
        self.connection = connection
        self.client = client
        self.name = name
        self.room = room
        self.canWrite = grant.map { $0.role >= .write } ?? true
        self.subject = grant?.subject
        self.role = grant?.role
        let pointer = connection.query["path"].flatMap { try? JSONPointer($0) } ?? .root
        self.sight = roomSight(following: pointer, reader: grant?.subject, redacting: redacting)
        self.limiter = limiter
        self.syncedVersion = room.releasedVersion
    }

    /// What the client says it is doing (its `presence` message's `state`); nil while it has none. Only this
    /// connection's: a resumed or new connection starts without one.
    var presenceState: JSON?

    var peer: Peer { Peer(client: client, name: name, subject: subject, state: presenceState) }

    /// The `path=` the client asked for, as given (its snapshot and resume echo it).
    var path: String? { connection.query["path"] }


    /// Who this client is to the reducer and in causes; `run` makes its connection unique beyond this server run.
    func sender(run: String) -> Sender {
        let session = sessionName
        var sender = Sender(
            client: client, name: connection.query["name"] == nil ? nil : name, session: session?.given,
            subject: subject, role: role?.rawValue,
            connection: "\(run)/\(client)")
        if let session { sender.author = "session:\(session.value)" }
        return sender
    }

    func answer(_ answer: RequestAnswer) {
        reply(OutboundFrame(text: answer.json.serialized()))
    }

    /// Queues a reply to this client: never dropped, and after the snapshot if one is owed.
    func reply(_ frame: OutboundFrame) {
        if needsSnapshot || heldSnapshot != nil {
            owed.append(frame)
        } else {
            forgetSentReplies()
            connection.send(frame)
            repliesInQueue.append((frame, connection.sentBytes))
        }
    }

    /// The client fell too far behind the room's stream: every frame still queued is dropped except replies, which
    /// are owed until the fresh snapshot it gets once its socket drains. It never sees a gap, and never slows the
    /// room down.
    func fellBehind() {
        forgetSentReplies()
        owed = repliesInQueue.map(\.frame)
        repliesInQueue.removeAll()
        connection.discardQueue()
        connection.notifyWhenDrained()
        needsSnapshot = true
    }

    /// The transport wrote everything queued; returns true if a snapshot is now owed.
    func drained() -> Bool {
        forgetSentReplies()
        return needsSnapshot
    }

    /// Queues `snapshot` (of `version`, a join's or the one owed), then the replies held back for it, once the room
    /// has released `version`: at once when `released` has reached it, else from ``sendHeldSnapshot()``. The caller
    /// then has the client follow the room (``Room/follow(_:)``), which waits for that release too.
    func synchronise(with snapshot: OutboundFrame, at version: Int, released: ReleasedPatches) {
        needsSnapshot = false
        syncedVersion = version
        guard !released.holdsSnapshot(of: version) else {
            heldSnapshot = snapshot
            return
        }
        send(snapshot)
    }

    /// The room released the version of the snapshot held for this client: it goes out, then the replies owed.
    func sendHeldSnapshot() {
        guard let snapshot = heldSnapshot else { return }
        heldSnapshot = nil
        send(snapshot)
    }

    private func send(_ snapshot: OutboundFrame) {
        connection.send(snapshot)
        let held = owed
        owed.removeAll()
        for frame in held { reply(frame) }
    }

    /// Drops the replies the connection has handed to the socket.
    private func forgetSentReplies() {
        while let first = repliesInQueue.first, first.end <= connection.writtenSentBytes {
            repliesInQueue.removeFirst()
        }
    }
}

@available(*, unavailable)
extension Session: Sendable {}

extension Session {
    /// The session named in the handshake (`session=`), if any, as its token's subject owns it where there are
    /// tokens; the handshake refused an invalid one.
    var sessionName: SessionName? {
        guard let name = connection.query["session"].flatMap(SessionName.init) else { return nil }
        return role == nil ? name : name.owned(by: subject)
    }
}
