#if canImport(Glibc)
import Glibc
#endif
import LockstepClient
import LockstepCore
import LockstepJSON

/// Turns causes into the compact lines of the activity log (`v12 alice 14:03:07 add {"title":"milk"}`,
/// `v13 bob 14:03:09 undid own v11`): who from the cause's own `name`, so a client that has left is still named,
/// and when from its `at`, in local time.
struct Narration {
    private(set) var names: [String: String] = [:]

    /// Remembers peers' names, for causes from a server that sends none.
    mutating func remember(_ peers: [Peer]) {
        for peer in peers { names[peer.client] = peer.name }
    }

    /// Who made a change: the cause's name, else a peer's remembered name, else the client id.
    func name(_ cause: Cause) -> String {
        if let name = cause.name { return name }
        guard let client = cause.client else { return "server" }
        return names[client] ?? client
    }

    /// One line for a change: version, who, when (when the cause says), what.
    func describe(_ cause: Cause, version: Int) -> String {
        let own = cause.mine ? "own " : ""
        let what =
            switch cause.kind {
            case .action: Self.action(cause.action)
            case .effect: "effect \(Self.action(cause.action))"
            case .undo: "undid \(own)v\(cause.of.map(String.init) ?? "?")"
            case .redo: "redid \(own)v\(cause.of.map(String.init) ?? "?")"
            case .revert: "reverted to v\(cause.to.map(String.init) ?? "?")"
            case .timer: "timer \(cause.timer ?? "?") \(Self.action(cause.action))"
            case .join: "joined: \(Self.action(cause.action))"
            case .leave: "left: \(Self.action(cause.action))"
            }
        let when = cause.at.map { " " + Self.time($0) } ?? ""
        return "v\(version) \(name(cause))\(when) \(what)"
    }

    /// Who else is typing, from the peers' presence states (`{"typing":true}`, as this client sets its own while a
    /// line is being edited): `bob is typing`, `alice and bob are typing`, `3 people are typing`; nil for nobody.
    static func typing(_ peers: [Peer], you: String?) -> String? {
        let names = peers.filter { $0.client != you && $0.state?["typing"] == true }.map(\.name)
        switch names.count {
        case 0: return nil
        case 1: return "\(names[0]) is typing"
        case 2: return "\(names[0]) and \(names[1]) are typing"
        default: return "\(names.count) people are typing"
        }
    }

    /// A cause's `at` (milliseconds since the Unix epoch) as the local time of day, `HH:MM:SS`.
    static func time(_ milliseconds: Int) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return "?" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    /// An action as its `type` followed by its other fields, compact.
    static func action(_ action: JSON?) -> String {
        guard let action else { return "?" }
        guard case .object(var object) = action, let type = object["type"]?.stringValue else { return "\(action)" }
        _ = object.removeValue(forKey: "type")
        return object.isEmpty ? type : "\(type) \(JSON.object(object))"
    }
}
