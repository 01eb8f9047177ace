import LockstepCore
import LockstepJSON
import LockstepTransport

/// A room in memory: its engine (``RoomEngine``: the store and what decides its turns), and what carries those
/// decisions out: the clients in it, its broadcast streams, its followers and listeners.
///
/// Loop-bound: touched only by ``SyncServer`` on the transport's thread.
final class Room {
    /// A patch as it went out, kept for `since=` and `history`.
    struct LoggedPatch {
        let version: Int
        let cause: Cause
        let frame: OutboundFrame
        /// The patch as each view stream it touched carries it, until it is released.
        var views: [RoomView: RoomViews.Frames] = [:]
        /// Whose private parts the change wrote: who may see its `action` in `history`.
        var touched = PrivateParts.Touched()
    }

    /// The room's store and decisions, with no I/O.
    var engine: RoomEngine
    var name: String { engine.name }
    /// Every released patch and presence, once for all clients; each client's connection follows it.
    let stream: BroadcastStream
    /// The stream of each of the engine's views, by the same key; a view goes when its last client leaves.
    private(set) var viewStreams: [RoomView: ViewStream] = [:]
    /// The parts of the room only their owners see.
    var privateParts: PrivateParts { engine.views.parts }
    /// Clients in join order (presence lists them so).
    private(set) var sessions: [Session] = []
    /// Clients whose snapshot is ahead of the released version (changes were being written when they joined): they
    /// get it, and follow the stream, once the patch of their version is out.
    private(set) var waiting: [Session] = []
    private var cachedState: (version: Int, bytes: [UInt8])?
    /// When the room's next presence goes out, and what it says.
    var presence = PresenceThrottle()
    /// Since when the room has had no client (its idle clock); nil while in use.
    var idleSince: Duration?
    /// A wait for the room's idle deadline is armed: the one the room has, however often it becomes idle.
    var awaitsIdleDeadline = false
    /// Made for an HTTP request that has not succeeded yet: until a request succeeds or a client joins, the room is
    /// no one's, and reads answer 404 as for a room never used (a refused request changes nothing).
    var isProvisional = false
    /// `.run` effects of this room still at work: their actions come back to it, so it stays in memory.
    var runningEffects = 0
    /// Followers of the room's changes over HTTP (`/log?follow=true`): each gets every patch the room releases, and
    /// the room stays in memory while it has any.
    var followers: [RoomFollower] = []

    /// No client uses the room, none waits to follow it, nobody follows its changes over HTTP, and no effect runs (its
    /// pipeline may still be at work).
    var isIdle: Bool {
        sessions.isEmpty && waiting.isEmpty && followers.isEmpty && changeListeners.isEmpty && runningEffects == 0
    }
    /// Consumers of ``SyncServer/changes(of:bufferingLimit:)``, by number.
    var changeListeners: [Int: AsyncStream<CommittedChange>.Continuation] = [:]
    /// Names this room's history (`epoch`); a stored room's is replaced by the one stored with it.
    var epoch = Room.makeEpoch()
    /// Storage has `epoch`, or the next write stores it.
    var epochStored = false

    init(
        name: String, store: any RoomStore, stream: BroadcastStream, resumeWindow: Int, recent: [LoggedPatch] = [],
        parts: PrivateParts = .none
    ) {
        engine = RoomEngine(name: name, store: store, resumeWindow: resumeWindow, recent: recent, parts: parts)
        self.stream = stream
    }

    /// Adds a client, to what its sight follows too.
    func join(_ session: Session) {
        sessions.append(session)
        idleSince = nil
        session.sight.admit(session, to: self)
    }

    func leave(_ session: Session) {
        sessions.removeAll { $0 === session }
        waiting.removeAll { $0 === session }
        session.connection.unfollow()
        session.sight.dismiss(session, from: self)
    }

    /// The stream `view`'s clients follow, if one is open.
    func openStream(of view: RoomView) -> ViewStream? {
        viewStreams[engine.views.key(of: view)]
    }

    /// Adds a client of `view` to the view's stream (opened by ``stream(of:make:)``).
    func admit(_ session: Session, to view: RoomView) {
        guard let stream = openStream(of: view) else { return }
        engine.views.admit(view, version: engine.store.version)
        stream.admit(session)
    }

    /// Takes a client of `view` off the view's stream, closing the stream after its last client.
    func dismiss(_ session: Session, from view: RoomView) {
        guard let stream = openStream(of: view) else { return }
        stream.dismiss(session)
        if engine.views.dismiss(view) { viewStreams[stream.view] = nil }
    }

    /// The stream `view`'s clients follow, opened at the room's version if none follows it yet.
    func stream(of view: RoomView, make: () -> BroadcastStream) -> ViewStream {
        let key = engine.views.key(of: view)
        if let existing = viewStreams[key] { return existing }
        let store = engine.store
        engine.views.open(view, version: store.version) { (try? store.stateJSON()) ?? .null }
        let opened = ViewStream(view: key, stream: make())
        viewStreams[key] = opened
        return opened
    }

    /// Sends a presence to every client: on the room's stream and on each view's.
    func broadcastPresence(_ frame: OutboundFrame) {
        stream.append(frame)
        for view in viewStreams.values { view.stream.append(frame) }
    }

    /// The room's state went back (a write taken back): each view's value is read again.
    func resetViews() {
        guard !engine.views.isEmpty, let state = try? engine.store.stateJSON() else { return }
        engine.views.reset(to: state)
    }

    /// Has `session`'s client receive the room's broadcasts from now on: at once if its mirror is at the released
    /// version (returns true), else once the patch of its version has gone out (`release` returns it then).
    @discardableResult
    func follow(_ session: Session) -> Bool {
        guard session.syncedVersion <= releasedVersion else {
            waiting.append(session)
            return false
        }
        session.connection.follow(session.sight.stream(in: self))
        return true
    }

    /// The newest version whose patch went out; the store may be ahead while changes are being written.
    var releasedVersion: Int { engine.releasedVersion }
    /// Changes since the last stored snapshot.
    var changesSinceSnapshot = 0

    /// Broadcasts a patch whose change is stored, and remembers it for resuming clients and `history`; returns the
    /// clients that were waiting for it, now following the stream.
    func release(_ patch: LoggedPatch) -> [Session] {
        engine.release(patch)
        stream.append(patch.frame)
        for (view, frames) in patch.views { viewStreams[view]?.release(frames) }
        guard !waiting.isEmpty else { return [] }
        let caughtUp = waiting.filter { $0.syncedVersion <= releasedVersion }
        waiting.removeAll { $0.syncedVersion <= releasedVersion }
        for session in caughtUp {
            session.sendHeldSnapshot()
            session.connection.follow(session.sight.stream(in: self))
        }
        return caughtUp
    }

    /// Changes after the last snapshot were taken back: its state is encoded again.
    func forgetEncodedState() {
        cachedState = nil
    }

    /// The whole state, serialized once per version for every snapshot of it.
    func stateBytes() throws(StoreError) -> [UInt8] {
        let version = engine.store.version
        if let cachedState, cachedState.version == version { return cachedState.bytes }
        let bytes = try engine.store.stateJSON().serialized()
        cachedState = (version, bytes)
        return bytes
    }

    /// A snapshot for client `you`, with its session's mark `seq`, of what `sight` sees, echoing `path` as the client
    /// gave it.
    func snapshot(
        for you: String, seq: Int? = nil, sight: any RoomSight, path: String? = nil
    ) throws(StoreError) -> OutboundFrame {
        let version = engine.store.version
        let stateBytes = try sight.snapshotState(of: self)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(stateBytes.count + 160)
        // {"type":"snapshot","room":..,"you":..,"version":..,"state":STATE,"undo":..,"redo":..}
        bytes += Array(#"{"type":"snapshot","room":"#.utf8)
        bytes += JSON.string(name).serialized()
        bytes += Array(#","you":"#.utf8)
        bytes += JSON.string(you).serialized()
        bytes += Array(",\"version\":\(version),\"state\":".utf8)
        bytes += stateBytes
        let history = engine.store.history
        bytes += Array(",\"undo\":\(history.undoCount),\"redo\":\(history.redoCount),\"epoch\":".utf8)
        bytes += JSON.string(epoch).serialized()
        if let path {
            bytes += Array(#","path":"#.utf8)
            bytes += JSON.string(path).serialized()
        }
        bytes += Array((seq.map { ",\"seq\":\($0)}" } ?? "}").utf8)
        return OutboundFrame(text: bytes)
    }

    /// The room's presence: the first `limit` peers in join order, and how many there are in all.
    ///
    /// Every client receives the whole message on every join and leave, so its size is bounded:
    /// without the limit a room of n clients costs n² bytes per change of membership.
    func presenceFrame(limit: Int, remote: [Peer]) -> OutboundFrame {
        let peers = sessions.prefix(limit).map(\.peer) + remote.prefix(max(0, limit - sessions.count))
        guard case .object(var message) = ServerMessage.presence(peers).json else {
            preconditionFailure("a presence message is an object")
        }
        message["count"] = .int(sessions.count + remote.count)
        return OutboundFrame(text: JSON.object(message).serialized())
    }

    /// The presence of the peers in `changedStates` that a full presence lists (the first `limit`), each with its
    /// latest state: `{"type":"presence","changed":[...]}`; nil when none of them is listed.
    func changedPresenceFrame(_ changedStates: Set<String>, limit: Int, remote: [Peer]) -> OutboundFrame? {
        var changed: [Peer] = []
        for session in sessions.prefix(limit) where changedStates.contains(session.client) {
            changed.append(session.peer)
        }
        for peer in remote.prefix(max(0, limit - sessions.count)) where changedStates.contains(peer.client) {
            changed.append(peer)
        }
        guard !changed.isEmpty else { return nil }
        return OutboundFrame(text: ServerMessage.presenceChanged(changed).serialized())
    }
}

@available(*, unavailable)
extension Room: Sendable {}
