public import LockstepCore
public import LockstepJSON

/// One thing that happened to a room's mirror, with the mirror as it stands right after it, so a view can redraw
/// from the update alone and never reads a state newer or older than the change it is showing.
public struct RoomUpdate: Sendable {
    /// What happened.
    public enum Change: Sendable, Equatable {
        /// A full state arrived (first connection, resynchronisation, or a server that lost the room's history).
        case snapshot
        /// A reconnection resumed at the mirror's version; missed patches follow as `patch` updates.
        case resumed
        /// The state moved one version forward (or more, for a view: the versions between changed nothing it shows);
        /// `changedPaths` are the locations the operations touched, relative to the view.
        case patch(ops: JSONPatch, cause: Cause, changedPaths: [JSONPointer])
        /// Peers joined or left, or only their presence states changed (both lists empty then); the full list, with
        /// states, is in `peers`.
        case presence(joined: [Peer], left: [Peer])
        /// The connection's status changed.
        case status(ConnectionStatus)
        /// The server reported an error that answers no request of ours (for example `too_large`).
        case serverError(code: String, message: String)
        /// A change request joined or left the outbox; see `pendingCount` and `pendingActions`.
        case outbox
    }

    /// What happened.
    public var change: Change
    /// The room's name.
    public var room: String
    /// The id the server gave this connection (`cause.client` of our own changes); nil before the first sync.
    public var you: String?
    /// The mirror's version after the change.
    public var version: Int
    /// The mirror's state after the change.
    public var state: JSON
    /// Who is in the room, in join order.
    public var peers: [Peer]
    /// How many changes can be undone now.
    public var undoCount: Int
    /// How many changes can be redone now.
    public var redoCount: Int
    /// The connection's status.
    public var status: ConnectionStatus
    /// Change requests not yet answered.
    public var pendingCount: Int
    /// Actions sent but not yet in `state`, in order: the prediction applies them over it.
    public var pendingActions: [JSON]
}
