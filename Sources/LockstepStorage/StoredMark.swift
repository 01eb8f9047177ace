/// The highest `seq` a room acknowledged for one client session, as the log keeps it.
public struct StoredMark: Sendable, Equatable {
    public let room: String
    public let session: String
    public let seq: Int
    /// When the session last sent a request that moved its mark (seconds since 1970); idle sessions are forgotten.
    public let time: Double
    /// The mark of an HTTP request's idempotency key keeps that request's answer, to answer the key again.
    public let answer: String?

    public init(room: String, session: String, seq: Int, time: Double, answer: String? = nil) {
        self.room = room
        self.session = session
        self.seq = seq
        self.time = time
        self.answer = answer
    }
}
