import LockstepCore

/// Who a request that did not come over WebSocket is from: what its changes' causes and the reducer's context say,
/// and the session it belongs to for `undo mine`.
public struct RequestSender: Sendable, Equatable {
    /// The display name in causes (`name`); nil for none.
    public var name: String?
    /// The subject (`sub`) the request acts with, as a token would give it.
    public var subject: String?
    /// The role the request acts with (`--history-role` applies to it); nil acts as a server without tokens.
    public var role: AccessRole?
    /// The session the request belongs to (1 to 64 characters of `[A-Za-z0-9._-]`): its changes are that session's for
    /// `undo mine`. Without one, each request is its own author.
    public var session: String?

    /// A sender named `name`, with a token's `subject` and `role`, in `session`.
    public init(name: String? = nil, subject: String? = nil, role: AccessRole? = nil, session: String? = nil) {
        self.name = name
        self.subject = subject
        self.role = role
        self.session = session
    }

    /// The session, as its subject owns it where there are tokens (`role` set); nil without one or for an invalid
    /// name.
    var sessionName: SessionName? {
        guard let name = session.flatMap(SessionName.init) else { return nil }
        return role == nil ? name : name.owned(by: subject)
    }

    /// Who the request is to the reducer and in causes: `client` in causes, `connection` naming this one request
    /// when there is no session.
    func sender(client: String, connection: String) -> Sender {
        var sender = Sender(
            client: client, name: name, session: sessionName?.given, subject: subject, role: role?.rawValue,
            connection: connection)
        if let sessionName { sender.author = "session:\(sessionName.value)" }
        return sender
    }
}
