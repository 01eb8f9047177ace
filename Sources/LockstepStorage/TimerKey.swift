/// A timer's place: its room and its name there.
public struct TimerKey: Sendable, Hashable {
    public let room: String
    public let name: String

    public init(room: String, name: String) {
        self.room = room
        self.name = name
    }
}
