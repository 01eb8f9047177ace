/// A compensation no longer applies: what it would take back was changed or removed since.
///
/// Undo mine and redo mine answer it with the `conflict` error, and the room's state stays as it was. Write the
/// message for the sender: `throw Conflict("todo 7 was removed since")`.
public struct Conflict: Error, Sendable, Equatable, CustomStringConvertible {
    /// What changed since, for the sender: the `conflict` error's `message`.
    public var message: String

    /// A conflict the sender is told about with `message`.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
