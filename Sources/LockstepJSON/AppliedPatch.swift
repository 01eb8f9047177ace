/// A patch as it was applied to one document: what it did, spelled one way, and how to undo that.
///
/// `forward` turns the document as it was into the document as it is, `inverse` turns it back; both are what a
/// server broadcasts and keeps for undo. Operations that changed nothing (`test`, a `move` onto itself, a value
/// replaced by an equal one) are left out of both, and a patch whose operations cancel out is undone and gives
/// two empty patches. To see that, a patch whose operations write overlapping places (one inside another, or
/// two in one array when one inserts or removes) compares the smallest subtree holding them before and after,
/// and so copies the containers it changes within that subtree once.
public struct AppliedPatch: Sendable, Hashable {
    /// The operations as performed: array indices instead of `-`, `replace` for an `add` over an existing member,
    /// the value added for a `copy`.
    public var forward: JSONPatch
    /// The operations that undo `forward`, in the order to apply them.
    public var inverse: JSONPatch

    /// A patch as applied, from the operations it performed and their undo.
    public init(forward: JSONPatch, inverse: JSONPatch) {
        self.forward = forward
        self.inverse = inverse
    }
}
