/// What a verified token allows: the room it names (or `*` for every room) and the role.
public struct AccessGrant: Sendable, Equatable {
    /// A room name, or `*` for every room.
    public let room: String
    /// What the token allows in the room: reading only, or also changing it.
    public let role: AccessRole
    /// The token's subject (`sub`), if it names one.
    public let subject: String?

    /// A grant of `role` in `room` (or `*`) to the token's `subject`.
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
