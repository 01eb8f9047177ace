import LockstepCore

/// What a room's queue in a shared log (``SharedRoomQueue``) needs to know of an input.
protocol BatchInput {
    /// Tells the connections that sent inputs apart.
    associatedtype Connection: Equatable

    /// The mark the locked write reads for it: its session's or its idempotency key's, or a timer's row.
    var markName: String? { get }
    /// The connection it came from, which is sent away to resume when whether it was stored is unknown; nil for an
    /// input that has none (HTTP, an effect, a timer, the app's action for a join or a leave).
    var connection: Connection? { get }
    /// The session and `seq` of a request under its session's mark; nil for any other input.
    var sessionSeq: (session: String, seq: Int)? { get }
}

extension RoomInput: BatchInput {
    var connection: ObjectIdentifier? {
        guard case .request(_, let session as Session, _) = self else { return nil }
        return ObjectIdentifier(session)
    }

    var sessionSeq: (session: String, seq: Int)? {
        guard case .request(let request, let requester, _) = self, let seq = request.seq,
            let name = requester.sessionName
        else { return nil }
        return (name.value, seq)
    }
}
