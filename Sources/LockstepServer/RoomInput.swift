import LockstepCore
import LockstepStorage

/// What changes a room, as the server hands it to its ``CommitPipeline``.
enum RoomInput {
    /// A client's action, undo, redo or revert; a revert further back than memory holds carries the stored changes
    /// it needs, read before it was submitted.
    case request(ClientRequest, Session, older: [StoredChange] = [])
    /// An action sent by one of the room's effects, started by `sender`'s action.
    case effect(EffectAction, Sender?)

    /// The client session named in the handshake, when the request carries a `seq` to deduplicate.
    var sessionName: String? {
        guard case .request(let request, let session, _) = self, request.seq != nil else { return nil }
        return session.sessionName?.value
    }
}

@available(*, unavailable)
extension RoomInput: Sendable {}
