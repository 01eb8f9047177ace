/// The highest `seq` a room acknowledged for one client session, as the log keeps it.
public struct StoredMark: Sendable, Equatable {
    public let room: String
    public let session: String
    public let seq: Int
    /// When the session last sent a request that moved its mark (seconds since 1970); idle sessions are forgotten.
    public let time: Double
    /// The mark of an HTTP request's idempotency key keeps that request's answer, to answer the key again.
    public let answer: String?
    /// A session's `seq`s below `seq` that were answered `unavailable` and not applied since: a client sending one
    /// again has it applied, not answered as a duplicate. Nil leaves the stored ones as they are.
    public let holes: [Int]?

    public init(room: String, session: String, seq: Int, time: Double, answer: String? = nil, holes: [Int]? = nil) {
        self.room = room
        self.session = session
        self.seq = seq
        self.time = time
        self.answer = answer
        self.holes = holes
    }

    /// A mark as read from the log's `answer` column, which holds a key's answer or a session's holes.
    public init(room: String, session: String, seq: Int, time: Double, stored column: String?) {
        if let column, column.hasPrefix(Self.holesPrefix) {
            let holes = column.dropFirst(Self.holesPrefix.count).split(separator: ",").compactMap { Int($0) }
            self.init(room: room, session: session, seq: seq, time: time, holes: holes)
        } else {
            self.init(room: room, session: session, seq: seq, time: time, answer: column)
        }
    }

    /// What the log's `answer` column keeps: a key's answer, a session's holes (`holes:` and the list, empty once
    /// they are filled), or nothing, which keeps what is there.
    public var storedColumn: String? {
        answer ?? holes.map { Self.holesPrefix + $0.map(String.init).joined(separator: ",") }
    }

    private static let holesPrefix = "holes:"
}
