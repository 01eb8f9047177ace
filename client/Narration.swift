import LockstepClient
import LockstepCore
import LockstepJSON

/// Turns causes into the words of the activity log ("alice: add {"title":"milk"}", "bob undid v3"), naming
/// clients by display name, including ones that have since left.
struct Narration {
    private(set) var names: [String: String] = [:]

    mutating func remember(_ peers: [Peer]) {
        for peer in peers { names[peer.client] = peer.name }
    }

    func name(_ client: String?) -> String {
        guard let client else { return "server" }
        return names[client] ?? client
    }

    /// One line for a change: who did what.
    func describe(_ cause: Cause, version: Int) -> String {
        let who = name(cause.client)
        switch cause.kind {
        case .action: return "v\(version) \(who): \(Self.action(cause.action))"
        case .effect: return "v\(version) effect: \(Self.action(cause.action))"
        case .undo: return "v\(version) \(who) undid v\(cause.of.map(String.init) ?? "?")"
        case .redo: return "v\(version) \(who) redid v\(cause.of.map(String.init) ?? "?")"
        case .revert: return "v\(version) \(who) reverted to v\(cause.to.map(String.init) ?? "?")"
        }
    }

    /// An action as its `type` followed by its other fields, compact.
    static func action(_ action: JSON?) -> String {
        guard let action else { return "?" }
        guard case .object(var object) = action, let type = object["type"]?.stringValue else { return "\(action)" }
        _ = object.removeValue(forKey: "type")
        return object.isEmpty ? type : "\(type) \(JSON.object(object))"
    }
}
