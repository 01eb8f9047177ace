internal import CLibWebSockets
import Synchronization

/// A response body produced piece by piece as the socket drains, for answers too large to build whole.
///
/// The transport asks for the next piece on the loop thread whenever it has written the previous one, and sends the
/// body with chunked transfer encoding, so a client can tell a body that ended from one that was cut off. A producer
/// with nothing ready yet answers `.later` and calls `resume()` once it has more, so the loop never waits for it.
///
/// An open-ended body (``init(openEnded:released:_:)``) waits for events rather than for work in progress: it may
/// answer `.later` for as long as it likes, keeps its connection alive itself, and may be ended from the server's side
/// with ``close()``.
// @unchecked Sendable: `next`, `released`, `server`, `wsi`, `waitingWsi` and `flushScheduled` are used on the loop thread
// only; `loop` is a Mutex.
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
        /// `responseWaitTimeoutSeconds` for it (without limit for an open-ended body), then closes.
        case later
    }

    let next: () -> Piece
    /// Whether `.later` may wait without the response wait timeout.
    let isOpenEnded: Bool
    /// Called once when the transport lets go of the body; nil once called.
    private var released: (() -> Void)?
    /// The loop of the server writing this body; set before `next` is first called.
    private let loop = Mutex<ServiceLoop?>(nil)
    /// The connection writing this body, from its head until the transport lets go of it.
    private var wsi: OpaquePointer?
    /// The connection waiting after `.later`; nil while the transport is writing, and once the client is gone.
    var waitingWsi: OpaquePointer?
    /// The server writing this body, which flushes it at the end of a pass in which it was resumed.
    private weak var server: WebSocketServer?
    /// A flush is scheduled for the end of this pass of the loop.
    var flushScheduled = false

    /// `next` is called on the loop thread until it returns `.end` or `.failed`, or the client goes away.
    public init(_ next: @escaping () -> Piece) {
        self.next = next
        isOpenEnded = false
    }

    /// A body that may wait for later events as long as it likes (`openEnded`), such as a feed of changes: it sends
    /// something now and then to keep the connection alive, and ends with `.end`, `.failed` or ``close()``.
    ///
    /// `released` is called once, on the loop thread, when the transport lets go of the body after writing its head:
    /// it was written to its end, it failed or was closed, or the client went away (noticed at the next write while
    /// the body waits). A body whose head is never written (the client left first) is never released: its producer
    /// finds its weak references to it gone.
    public init(openEnded: Bool, released: (() -> Void)? = nil, _ next: @escaping () -> Piece) {
        self.next = next
        isOpenEnded = openEnded
        self.released = released
    }

    /// After `next` answered `.later`: asks the transport to call it again. Any thread; does nothing while the
    /// transport is still writing (it asks anyway) or once the body ended or the client went away.
    ///
    /// The transport calls it at the end of the loop's pass, once however often the body was resumed in it, and
    /// writes all it then has in one send (`HTTPStreamWriter.flush`), as WebSocket broadcasts are: a feed of small
    /// pieces costs a send per pass, not a send and a wake of the loop per piece.
    public func resume() {
        guard let loop = loop.withLock({ $0 }) else { return }
        if loop.isCurrent { return scheduleFlush() }
        loop.execute { [self] in scheduleFlush() }
    }

    /// Has the server flush this body at the end of this pass. Loop thread.
    private func scheduleFlush() {
        guard waitingWsi != nil, !flushScheduled, let server else { return }
        flushScheduled = true
        server.scheduleFlush(self)
    }

    /// Ends the body from the server's side: its connection closes without the final chunk, whatever is still queued
    /// for it, and `released` follows. Any thread; does nothing before the head is written or once the body is gone.
    public func close() {
        loop.withLock { $0 }?.execute { [self] in
            guard let wsi else { return }
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        }
    }

    /// Binds the stream to the server and connection that write it. Loop thread.
    func bind(to server: WebSocketServer, wsi: OpaquePointer) {
        loop.withLock { $0 = server.loop }
        self.server = server
        self.wsi = wsi
    }

    /// The transport lets go of the body: it ended, failed or its connection closed. Loop thread.
    func release() {
        waitingWsi = nil
        wsi = nil
        let released = self.released
        self.released = nil
        released?()
    }

    public static func == (lhs: HTTPBodyStream, rhs: HTTPBodyStream) -> Bool { lhs === rhs }
}
