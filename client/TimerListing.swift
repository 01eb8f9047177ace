import Foundation
import LockstepJSON

/// The room's pending timers (`GET /rooms/ROOM/timers`), and how the log shows them: a timer is not part of the
/// room's state, so the client asks the server's HTTP side.
enum TimerListing {
    /// The pending timers of the room at `roomURL`, soonest first, each as the server lists it
    /// (`{"timer","due","client","name","action"}`).
    static func fetch(roomURL: String) async throws(CommandError) -> [JSON] {
        let answer = try await RoomHTTP.get(roomURL: roomURL, suffix: "/timers", what: "the room's timers")
        guard let timers = answer["timers"]?.arrayValue else {
            throw CommandError.failed("the server's answer lists no timers")
        }
        return timers
    }

    /// One log line for a listed timer: `turn in 29s (14:03:37) by alice: increment`; `now` in milliseconds since
    /// the Unix epoch.
    static func describe(_ timer: JSON, now: Int) -> String {
        let name = timer["timer"]?.stringValue ?? "?"
        var line = name
        if let due = timer["due"]?.intValue {
            line += " in \(seconds(until: due, now: now)) (\(Narration.time(due)))"
        }
        if let who = timer["name"]?.stringValue ?? timer["client"]?.stringValue { line += " by \(who)" }
        if let action = timer["action"] { line += ": " + Narration.action(action) }
        return line
    }

    /// A scheduled timer as the log shows it: `timer turn due 14:03:37`.
    static func describe(scheduled name: String, due: Date?) -> String {
        guard let due else { return "timer \(name) scheduled" }
        return "timer \(name) due \(Narration.time(milliseconds(due)))"
    }

    /// A time as milliseconds since the Unix epoch.
    static func milliseconds(_ date: Date) -> Int {
        Int((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The time left until `due`, rounded up to seconds: `29s`, `4m05s`, `2h00m`.
    static func seconds(until due: Int, now: Int) -> String {
        let left = max(0, (due - now + 999) / 1000)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        if left < 60 { return "\(left)s" }
        if left < 3600 { return "\(left / 60)m\(two(left % 60))s" }
        return "\(left / 3600)h\(two(left % 3600 / 60))m"
    }
}
