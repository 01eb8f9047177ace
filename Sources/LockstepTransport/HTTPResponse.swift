/// The answer to a plain HTTP request; the body may be any size (it is written across several writeable callbacks).
public struct HTTPResponse: Sendable, Equatable {
    /// The status code, e.g. 200.
    public var status: Int
    /// The Content-Type header value.
    public var contentType: String
    /// The complete body.
    public var body: [UInt8]
    /// Extra response headers.
    public var headers: [String: String]
    /// A body produced while it is written, sent chunked in place of `body`; nil for a complete `body`.
    public var stream: HTTPBodyStream?
    /// Set by ``deferred(_:)``: the answer comes later, through the promise, and the other fields are not sent.
    public private(set) var promise: HTTPPromise?

    /// Builds a response; Content-Length is added automatically.
    public init(status: Int, contentType: String = "text/plain", body: [UInt8] = [], headers: [String: String] = [:]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// Builds a response whose body `stream` produces as the client reads it (chunked, no Content-Length).
    public init(status: Int, contentType: String, headers: [String: String] = [:], stream: HTTPBodyStream) {
        self.init(status: status, contentType: contentType, headers: headers)
        self.stream = stream
    }

    /// An answer that comes later: the transport writes nothing until `promise` is completed.
    public static func deferred(_ promise: HTTPPromise) -> HTTPResponse {
        var response = HTTPResponse(status: 0)
        response.promise = promise
        return response
    }

    /// The same answer with `headers` too; they win over headers of the same name.
    public func adding(_ headers: [String: String]) -> HTTPResponse {
        var response = self
        response.headers.merge(headers) { _, added in added }
        return response
    }

    /// Builds a text response.
    public init(status: Int, text: String, contentType: String = "text/plain; charset=utf-8") {
        self.init(status: status, contentType: contentType, body: Array(text.utf8))
    }

    /// The standard reason phrase of the statuses Lockstep answers with.
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
