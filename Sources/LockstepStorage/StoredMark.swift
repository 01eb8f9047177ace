/// The highest `seq` a room acknowledged for one client session, as the log keeps it.
public struct StoredMark: Sendable, Equatable {
    public let room: String
    public let session: String
    public let seq: Int
    /// When the session last sent a request that moved its mark (seconds since 1970); idle sessions are forgotten.
    public let time: Double

    public init(room: String, session: String, seq: Int, time: Double) {
        self.room = room
        self.session = session
        self.seq = seq
        self.time = time
    }
}
