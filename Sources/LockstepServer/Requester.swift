import LockstepCore

/// Where a request to a room comes from and where its answer goes: a client's connection (``Session``) or an HTTP
/// exchange (``HTTPRequester``). The room applies both alike, in its one order, and answers each once what the request
/// changed is as durable as an ack.
///
/// Loop-bound: touched only by ``SyncServer`` on the transport's thread.
protocol Requester: AnyObject {
    var room: Room { get }
    /// The `client` of the changes it makes: the connection's id, or `http`.
    var client: String { get }
    /// The token's subject and role; nil without tokens.
    var subject: String? { get }
    var role: AccessRole? { get }
    /// The session the request belongs to (for `seq` marks and `undo mine`), as its subject owns it; nil for none.
    var sessionName: SessionName? { get }
    /// A request carrying an idempotency key: the key's mark and the digest of what was asked (HTTP only).
    var idempotency: Idempotency? { get }
    /// Who the request is to the reducer and in causes; `run` makes a sender without a session unique beyond this
    /// server run.
    func sender(run: String) -> Sender
    /// Takes the request's answer, in order after everything the room sent it before.
    func answer(_ answer: RequestAnswer)
}

extension Requester {
    var idempotency: Idempotency? { nil }
}

/// A requester with no connection of its own (HTTP, Swift): who it is comes from its ``RequestSender``.
protocol RequesterWithoutConnection: Requester {
    var from: RequestSender { get }
}

extension RequesterWithoutConnection {
    var subject: String? { from.subject }
    var role: AccessRole? { from.role }
    var sessionName: SessionName? { from.sessionName }
}
