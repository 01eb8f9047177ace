import Synchronization

/// A response body produced piece by piece as the socket drains, for answers too large to build whole.
///
/// The transport asks for the next piece on the loop thread whenever it has written the previous one, and sends the
/// body with chunked transfer encoding, so a client can tell a body that ended from one that was cut off. A producer
/// with nothing ready yet answers `.later` and calls `resume()` once it has more, so the loop never waits for it.
// @unchecked Sendable: `next` and `waitingWsi` are used on the loop thread only; `loop` is a Mutex.
public final class HTTPBodyStream: @unchecked Sendable, Equatable {
    /// What the producer has next.
    public enum Piece {
        /// More of the body (empty pieces are skipped).
        case bytes([UInt8])
        /// The body is complete.
        case end
        /// The body cannot be completed: the connection closes without the final chunk.
        case failed
        /// Nothing yet: the transport stops asking until `resume()` is called. The connection waits up to
        /// `responseWaitTimeoutSeconds` for it, then closes.
        case later
    }

    let next: () -> Piece
    /// The loop of the server writing this body; set before `next` is first called.
    private let loop = Mutex<ServiceLoop?>(nil)
    /// The connection waiting after `.later`; nil while the transport is writing, and once the client is gone.
    var waitingWsi: OpaquePointer?

    /// `next` is called on the loop thread until it returns `.end` or `.failed`, or the client goes away.
    public init(_ next: @escaping () -> Piece) {
        self.next = next
    }

    /// After `next` answered `.later`: asks the transport to call it again. Any thread; does nothing while the
    /// transport is still writing (it asks anyway) or once the body ended or the client went away.
    public func resume() {
        loop.withLock { $0 }?.execute { [self] in
            guard let wsi = waitingWsi else { return }
            waitingWsi = nil
            HTTPExchange.proceed(wsi)
        }
    }

    /// Binds the stream to the loop that writes it. Loop thread.
    func bind(to loop: ServiceLoop) {
        self.loop.withLock { $0 = loop }
    }

    public static func == (lhs: HTTPBodyStream, rhs: HTTPBodyStream) -> Bool { lhs === rhs }
}
