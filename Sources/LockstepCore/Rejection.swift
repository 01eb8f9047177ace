/// A domain rule refused an action; the room's state stays as it was.
///
/// Its message reaches the sender as the `message` of a `rejected` error, so write it for them:
/// `throw Rejection("no todo with id 7")`.
public struct Rejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the action was refused, in words a client can show.
    public var message: String

    /// A refusal the sender reads as `message`.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
