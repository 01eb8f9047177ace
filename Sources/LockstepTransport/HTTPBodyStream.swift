/// A response body produced piece by piece as the socket drains, for answers too large to build whole.
///
/// The transport asks for the next piece on the loop thread whenever it has written the previous one, and sends the
/// body with chunked transfer encoding, so a client can tell a body that ended from one that was cut off.
// @unchecked Sendable: `next` is called on the loop thread only, the thread that built the response.
public final class HTTPBodyStream: @unchecked Sendable, Equatable {
    /// What the producer has next.
    public enum Piece {
        /// More of the body (empty pieces are skipped).
        case bytes([UInt8])
        /// The body is complete.
        case end
        /// The body cannot be completed: the connection closes without the final chunk.
        case failed
    }

    let next: () -> Piece

    /// `next` is called on the loop thread until it returns `.end` or `.failed`, or the client goes away.
    public init(_ next: @escaping () -> Piece) {
        self.next = next
    }

    public static func == (lhs: HTTPBodyStream, rhs: HTTPBodyStream) -> Bool { lhs === rhs }
}
