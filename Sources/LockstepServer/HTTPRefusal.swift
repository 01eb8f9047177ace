import LockstepTransport

/// Why an HTTP request does not reach its room: its status, the protocol's code and words, and headers of its own.
struct HTTPRefusal: Error {
    let status: Int
    let code: String
    let message: String
    var headers: [String: String] = [:]

    /// The refusal as a plain-text answer (`code: message`), as reads are refused.
    var textResponse: HTTPResponse {
        HTTPResponse(status: status, text: "\(code): \(message)\n").adding(headers)
    }
}
