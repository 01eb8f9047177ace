/// One HTTP response being written across `LWS_CALLBACK_HTTP_WRITEABLE` callbacks. Loop-bound.
final class HTTPExchange {
    let body: [UInt8]
    var offset = 0

    init(body: [UInt8]) { self.body = body }
}

@available(*, unavailable)
extension HTTPExchange: Sendable {}
