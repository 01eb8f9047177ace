import LockstepCore
import LockstepJSON
import LockstepStorage

/// What changes a room, as the server hands it to its ``CommitPipeline``.
enum RoomInput {
    /// An action, undo, redo or revert from a client or over HTTP; a revert further back than memory holds carries
    /// the stored changes it needs, read before it was submitted.
    case request(ClientRequest, any Requester, older: [StoredChange] = [])
    /// An action sent by one of the room's effects, started by `sender`'s action.
    case effect(EffectAction, Sender?)
    /// A timer that came due.
    case timer(StoredTimer)
    /// The app's action for a client that joined or left (`kind` `join` or `leave`), as that client's.
    case membership(JSON, Sender, Cause.Kind)

    /// What a locked write of a shared log reads for it: the mark that tells whether the request was applied before
    /// (its session's, when it carries a `seq`, or its idempotency key's), or whether a timer is still pending.
    var markName: String? {
        switch self {
        case .request(let request, let requester, _):
            if let idempotency = requester.idempotency { return idempotency.markName }
            return request.seq == nil ? nil : requester.sessionName?.value
        case .timer(let timer):
            return "timer:\(timer.name)"
        case .effect, .membership:
            return nil
        }
    }
}

@available(*, unavailable)
extension RoomInput: Sendable {}
