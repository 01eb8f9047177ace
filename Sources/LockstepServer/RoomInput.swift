import LockstepCore
import LockstepStorage

/// What changes a room, as the server hands it to its ``CommitPipeline``.
enum RoomInput {
    /// An action, undo, redo or revert from a client or over HTTP; a revert further back than memory holds carries
    /// the stored changes it needs, read before it was submitted.
    case request(ClientRequest, any Requester, older: [StoredChange] = [])
    /// An action sent by one of the room's effects, started by `sender`'s action.
    case effect(EffectAction, Sender?)

    /// The mark that tells whether the request was applied before: its session's, when it carries a `seq`, or its
    /// idempotency key's.
    var markName: String? {
        guard case .request(let request, let requester, _) = self else { return nil }
        if let idempotency = requester.idempotency { return idempotency.markName }
        return request.seq == nil ? nil : requester.sessionName?.value
    }
}

@available(*, unavailable)
extension RoomInput: Sendable {}
