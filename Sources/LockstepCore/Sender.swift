/// Who sent a request: what a reducer may base its rules on, and whose change it becomes.
public struct Sender: Sendable, Equatable, Hashable {
    /// The connection's id in the room (`you` in its snapshot).
    public var client: String
    /// The display name it chose (`name=`); nil when it chose none.
    public var name: String?
    /// The session it named (`session=`), which outlives its connections.
    public var session: String?
    /// The subject (`sub`) of its token.
    public var subject: String?
    /// The role of its token (`read` or `write`); nil when the server needs no token.
    public var role: String?
    /// Whose change a request makes, for undo mine: the session when the connection names one (so it holds across
    /// reconnections and servers), else the connection (`connection` must then be unique to the server run).
    public var author: String

    /// A sender; its ``author`` is its `session` when it has one, else `connection` (by default `client`).
    public init(
        client: String, name: String? = nil, session: String? = nil, subject: String? = nil, role: String? = nil,
        connection: String? = nil
    ) {
        self.client = client
        self.name = name
        self.session = session
        self.subject = subject
        self.role = role
        self.author = session.map { "session:\($0)" } ?? "connection:\(connection ?? client)"
    }
}
