internal import CLibWebSockets

/// One HTTP response being written across `LWS_CALLBACK_HTTP_WRITEABLE` callbacks. Loop-bound.
final class HTTPExchange {
    /// The bytes being written: the whole body, or the current chunk of a stream.
    var body: [UInt8]
    var offset = 0
    /// Produces the rest of a streamed body; nil when `body` is all of it.
    let stream: HTTPBodyStream?
    /// The deferred answer this exchange waits for, until its head is written.
    var promise: HTTPPromise?
    /// A request whose body is still arriving: it is answered once the body is whole.
    var receiving: HTTPRequest?
    /// How the stream ended (`.end` or `.failed`) when a flush at a pass's end met it: the writeable callback that
    /// finishes the body takes it in place of asking the stream again.
    var streamEnding: HTTPBodyStream.Piece?

    init(body: [UInt8], stream: HTTPBodyStream? = nil) {
        self.body = body
        self.stream = stream
    }

    /// Waits for the producer (a deferred answer, a stream's `.later`) for up to `responseWaitTimeoutSeconds`. Reading
    /// pauses meanwhile: lws does not read in the middle of a transaction, so a client's close or next request would
    /// otherwise wake the loop again and again.
    func pause(_ wsi: OpaquePointer, server: WebSocketServer) {
        lws_rx_flow_control(wsi, 0)
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(server.configuration.responseWaitTimeoutSeconds))
    }

    /// The producer of a paused exchange has answered: the wait's deadline goes, reading resumes (lws serves no
    /// writeable callback to a wsi whose reading is paused) and the writeable callback writes what it has. Loop thread.
    static func proceed(_ wsi: OpaquePointer, server: WebSocketServer) {
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
        lws_rx_flow_control(wsi, 1 | Int32(LWS_RXFLOW_REASON_FLAG_PROCESS_NOW))
        server.requestWritable(wsi)
    }
}

@available(*, unavailable)
extension HTTPExchange: Sendable {}
