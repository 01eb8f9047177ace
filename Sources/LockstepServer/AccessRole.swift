/// What a token lets its holder do in its room.
public enum AccessRole: String, Sendable, Codable, CaseIterable {
    /// Receives everything; `action`, `undo` and `redo` get `forbidden`.
    case read
    /// Reads and changes the room.
    case write
}
