/// What a token lets its holder do in its room; each role may do everything the ones before it may.
public enum AccessRole: String, Sendable, Codable, CaseIterable, Comparable {
    /// Receives everything; `action`, `undo` and `redo` get `forbidden`.
    case read
    /// Reads and changes the room.
    case write
    /// Also acts on everyone's changes (global `undo`, `redo`, `revert`) where the server's history role
    /// (`--history-role admin`) asks for it.
    case admin

    /// Whether `lhs` may do less than `rhs`: read, then write, then admin.
    public static func < (lhs: AccessRole, rhs: AccessRole) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
