public import LockstepJSON

/// A change that can be undone or redone: both directions as patches, never a copy of the state.
public struct HistoryEntry: Sendable, Equatable {
    /// The version the change first produced; undo and redo report it as `cause.of`.
    public let version: Int
    /// Re-applies the change (redo).
    public let forward: JSONPatch
    /// Reverts the change (undo).
    public let inverse: JSONPatch

    /// An entry for the change that produced `version`, with both its patches.
    public init(version: Int, forward: JSONPatch, inverse: JSONPatch) {
        self.version = version
        self.forward = forward
        self.inverse = inverse
    }
}
