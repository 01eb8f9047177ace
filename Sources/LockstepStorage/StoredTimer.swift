/// A pending timer as storage keeps it with its room: the action to apply when it comes due, and who scheduled it.
public struct StoredTimer: Sendable, Equatable {
    public let room: String
    /// Unique in the room: scheduling the name again replaces the timer.
    public let name: String
    /// When it comes due, in milliseconds since the Unix epoch.
    public let due: Int
    /// Orders timers due together: the order they were scheduled in.
    public let order: Int
    /// The request and its sender, as the server encodes them (JSON).
    public let request: [UInt8]

    public init(room: String, name: String, due: Int, order: Int, request: [UInt8]) {
        self.room = room
        self.name = name
        self.due = due
        self.order = order
        self.request = request
    }
}
