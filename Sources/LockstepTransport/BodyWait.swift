/// What a connection's current request still waits for of its body, for the timer its head armed when it announced
/// one: the whole body must arrive within the handshake timeout, as the head must, whereas libwebsockets' own timeout
/// starts again with every piece (a byte a second would hold the connection for good).
enum BodyWait: Int {
    /// No body, or all of it arrived (per-session data starts zeroed).
    case settled = 0
    /// The body is arriving for the owner: when time runs out, a `408` and the connection closed.
    case receiving
    /// The request was answered at its head (a body over the limit) and libwebsockets reads the body past: when time
    /// runs out, the connection closed.
    case discarding

    /// The `408` answer's text.
    static func timeoutMessage(seconds: Int) -> String {
        "the request's body did not arrive within \(seconds) s of its head\n"
    }
}
