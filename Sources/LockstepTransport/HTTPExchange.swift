/// One HTTP response being written across `LWS_CALLBACK_HTTP_WRITEABLE` callbacks. Loop-bound.
final class HTTPExchange {
    /// The bytes being written: the whole body, or the current chunk of a stream.
    var body: [UInt8]
    var offset = 0
    /// Produces the rest of a streamed body; nil when `body` is all of it.
    let stream: HTTPBodyStream?

    init(body: [UInt8], stream: HTTPBodyStream? = nil) {
        self.body = body
        self.stream = stream
    }
}

@available(*, unavailable)
extension HTTPExchange: Sendable {}
