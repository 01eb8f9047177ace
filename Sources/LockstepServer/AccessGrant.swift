/// What a verified token allows: the room it names (or `*` for every room) and the role.
public struct AccessGrant: Sendable, Equatable {
    /// A room name, or `*` for every room.
    public let room: String
    public let role: AccessRole

    public init(room: String, role: AccessRole) {
        self.room = room
        self.role = role
    }

    /// Whether this grant covers `name`.
    public func covers(room name: String) -> Bool {
        room == "*" || room == name
    }
}
