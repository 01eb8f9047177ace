public import LockstepJSON

/// One new version of a room: the patch from the version before, and what it did.
public struct Change: Sendable, Equatable {
    /// What produced a change, as far as the store can tell; the server adds who sent it.
    public enum Kind: Sendable, Equatable {
        /// A reducer ran on an action.
        case action
        /// The change made at version `of` was reverted.
        case undo(of: Int)
        /// The change made at version `of`, undone earlier, was applied again.
        case redo(of: Int)
        /// The room went back to the state it had at version `to`; no reducer ran.
        case revert(to: Int)
        /// Undo mine: the author's change made at version `of` was taken back on top of later changes, by what
        /// takes back the change at version `taking` (`of` itself, or the redo mine that last re-applied it).
        case undoMine(of: Int, taking: Int)
        /// Redo mine: the author's change made at version `of` was re-applied, by taking back the undo mine at
        /// version `taking`.
        case redoMine(of: Int, taking: Int)
    }

    /// The version the room has after this change; always one more than before.
    public let version: Int
    /// Takes the state of `version - 1` to the state of `version`.
    public let patch: JSONPatch
    /// Takes the state of `version` back to `version - 1`; a durable log keeps it to rebuild undo.
    public let inverse: JSONPatch
    /// What produced the change: an action, an undo or redo (global or mine), or a revert.
    public let kind: Kind

    /// A change to `version`, with its patch from the version before and its inverse.
    public init(version: Int, patch: JSONPatch, inverse: JSONPatch, kind: Kind) {
        self.version = version
        self.patch = patch
        self.inverse = inverse
        self.kind = kind
    }
}
