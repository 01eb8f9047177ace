/// What a verified token allows: the room it names (or `*` for every room) and the role.
public struct AccessGrant: Sendable, Equatable {
    /// A room name, or `*` for every room.
    public let room: String
    public let role: AccessRole
    /// The token's subject (`sub`), if it names one.
    public let subject: String?

    public init(room: String, role: AccessRole, subject: String? = nil) {
        self.room = room
        self.role = role
        self.subject = subject
    }

    /// Whether this grant covers `name`.
    public func covers(room name: String) -> Bool {
        room == "*" || room == name
    }
}
