public import Foundation

/// A timer the server holds for a room: its name (to cancel or replace it) and when it fires.
public struct ScheduledTimer: Sendable, Equatable, CustomStringConvertible {
    /// The timer's name, unique in the room: scheduling it again replaces it, ``RoomClient/cancel(timer:)`` takes it
    /// away.
    public var name: String
    /// When the server applies the action, by the server's clock; nil when the answer was lost to a dropped
    /// connection and the session's mark said only that the timer was scheduled.
    public var due: Date?

    /// A timer named `name`, due at `due`.
    public init(name: String, due: Date?) {
        self.name = name
        self.due = due
    }

    /// A timer as the server answers it: `due` in milliseconds since the Unix epoch.
    init(name: String, dueMilliseconds: Int?) {
        self.name = name
        due = dueMilliseconds.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    public var description: String {
        guard let due else { return "timer \(name)" }
        return "timer \(name) due \(due)"
    }
}
