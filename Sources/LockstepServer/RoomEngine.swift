import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport
import Logging

/// A room's decisions, with no I/O: its store, and what decides each turn (its session marks, the inverses time
/// travel rebuilds from, its views, the patches released to its clients, the timers its locked write read).
///
/// ``take(_:at:epoch:rules:timers:)`` applies one input in the room's turn and returns what must happen, in order: a
/// change to store and release, a mark or timer to store with it, an answer for the input's source, a timer wait to
/// move, work to start. It never touches a socket, storage, a clock or a task. ``SyncServer`` keeps one in each
/// ``Room`` and carries its outputs out; the cluster simulation runs the same engine in its simulated servers, so what
/// the simulation checks is what the server decides.
struct RoomEngine {
    let name: String
    var store: any RoomStore
    /// The highest `seq` applied for each client session, and each idempotency key's answer.
    var marks = SessionMarks()
    /// Inverse patches of recent changes, for revert and past versions.
    var timeline: RoomTimeline
    /// The views clients follow (`?path=`, or private parts) and what each change is to each of them.
    var views: RoomViews
    /// The patches sent to its clients, as many as the resume window holds.
    var released: ReleasedPatches
    /// On several servers, the room's pending timers (name and order) as its locked write read them, with the write's
    /// own changes since: a timer fires only if it is still there. Nil where this server alone writes the log.
    var loggedTimers: [String: Int]?

    init(name: String, store: any RoomStore, resumeWindow: Int, recent: [Room.LoggedPatch], parts: PrivateParts) {
        self.name = name
        self.store = store
        timeline = RoomTimeline(window: resumeWindow)
        views = RoomViews(parts: parts, resumeWindow: resumeWindow)
        released = ReleasedPatches(version: store.version, window: resumeWindow, recent: recent)
    }

    /// The newest version whose patch went out; the store may be ahead while changes are being written.
    var releasedVersion: Int { released.version }

    /// A change's patch went out to the room's clients: kept for resuming clients and `history`, and as each view it
    /// reached sees it.
    mutating func release(_ patch: Room.LoggedPatch) {
        released.release(patch)
        views.release(patch.views, version: patch.version)
    }

    /// Whether rebuilding `version` needs older inverses than memory holds: they are read from storage first.
    func needsStoredHistory(toReach version: Int) -> Bool {
        (0..<store.version).contains(version) && version + 1 < (timeline.oldestVersion ?? store.version + 1)
    }

    /// The state the room had at `version`, rebuilt by its timeline from memory and then from `older` (stored changes
    /// read beforehand).
    func state(at version: Int, older: [StoredChange] = []) throws(TimeTravelError) -> JSON {
        try timeline.state(at: version, from: RoomTurn.state(of: store), current: store.version, older: older)
    }

    /// The newest version the room's clients have received, and its state: the store's less the changes still being
    /// stored, so that a read never shows what a crash could take back.
    func releasedState() throws -> (version: Int, state: JSON) {
        guard releasedVersion < store.version else { return (releasedVersion, try store.stateJSON()) }
        return (releasedVersion, try state(at: releasedVersion))
    }

    /// What a client resuming after `version` missed, as `sight` sees the room; nil when the room no longer has all
    /// of it (the client then gets a snapshot).
    func missedPatches(after version: Int, seenBy sight: any RoomSight) -> [OutboundFrame]? {
        sight.missedPatches(
            after: version, released: released, current: store.version, views: views,
            state: { past in try state(at: past) })
    }
}

extension RoomEngine {
    /// What the room takes in its turn.
    enum Input {
        /// An action, undo, redo, revert, timer or cancel from `source`; a revert further back than memory holds
        /// carries the stored changes it needs, read before its turn.
        case request(ClientRequest, from: Source, older: [StoredChange] = [])
        /// An action sent by one of the room's effects, started by `sender`'s action.
        case effect(EffectAction, Sender?)
        /// A timer that came due.
        case timer(StoredTimer)
        /// The app's action for a client that joined or left (`kind` `join` or `leave`), as that client's.
        case membership(JSON, Sender, Cause.Kind)
    }

    /// Who a request comes from, as its turn needs it.
    struct Source {
        /// The `client` of its changes' causes: a connection's id, or `http`.
        var client: String
        /// Who it is to the reducer.
        var sender: Sender
        /// Its token's subject: whose private parts it may write and read.
        var subject: String?
        /// The session its `seq` counts in.
        var session: String?
        var idempotency: Idempotency?

        /// A request the server makes for `sender` (a timer, a join): no session, no key.
        init(detached sender: Sender) {
            self.init(client: sender.client, sender: sender, subject: sender.subject)
        }

        init(
            client: String, sender: Sender, subject: String?, session: String? = nil, idempotency: Idempotency? = nil
        ) {
            self.client = client
            self.sender = sender
            self.subject = subject
            self.session = session
            self.idempotency = idempotency
        }
    }

    /// What must happen after a turn, in order.
    enum Output {
        /// A change made: stored, then released to the room's clients.
        case commit(Commit)
        /// A session's or idempotency key's mark moved: stored with the turn's changes.
        case mark(StoredMark)
        /// Timers scheduled and gone (fired or cancelled): stored with the turn's changes.
        case timers(scheduled: [StoredTimer], gone: [TimerKey])
        /// What the server's one timer wait must become.
        case wait(TimerSchedule.Wait)
        /// The answer to the input's source, after everything the room holds back before it.
        case answer(RequestAnswer)
        /// An effect's work, run outside the room: what it sends comes back as an `effect` input, as `sender`'s.
        case run(Work, sender: Sender?)
        /// Something only the operator hears of: a request made for someone that changed nothing, an effect's action
        /// or timer refused, a timer that cannot be read.
        case notice(Logger.Level, String, reason: String, client: String?)
    }

    /// An effect's work, as the reducer returned it.
    typealias Work = @Sendable (_ send: @escaping @Sendable (EffectAction) async -> Void) async -> Void

    /// A change the turn made: the store's change, the patch message every client gets and the log keeps, with its
    /// record of authors and inverse, and the patch as the room releases it (to each view too). A reference, so that
    /// handing the output on copies one pointer, not every part of the change.
    final class Commit {
        let change: Change
        let encoded: RoomTurn.Patch
        let patch: Room.LoggedPatch

        init(change: Change, encoded: RoomTurn.Patch, patch: Room.LoggedPatch) {
            self.change = change
            self.encoded = encoded
            self.patch = patch
        }
    }

    /// The server's settings a turn follows.
    struct Rules {
        /// Private parts a request may not write or read unless its subject owns them.
        var guarded: PrivateParts
        /// How long session marks stay, and how many a room keeps.
        var sessionWrites: SessionWrites
        /// The most pending timers a room holds (`--max-timers`).
        var maxTimers: Int
    }

    /// When a turn happens: by the server's clock (a change's time, timers' due times; milliseconds since the Unix
    /// epoch), and by the wall clock session marks keep, which means the same after a restart.
    struct Time {
        let milliseconds: Int
        let markSeconds: Double
    }

    /// What a turn returns: its outputs, whether it applied its input (a request answered from its session's or key's
    /// mark was not), and how many actions it ran through the reducer for someone (a client's, a timer's, a join's).
    struct Turn {
        var outputs: [Output] = []
        var applied = true
        var actions = 0
    }
}
