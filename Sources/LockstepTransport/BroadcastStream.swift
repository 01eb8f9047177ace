/// Frames for every connection that follows the stream, stored once: a broadcast is one copy into the stream, and
/// each connection writes straight from it, at its own pace, everything that arrived since its last write.
///
/// With a queue per connection, a broadcast to n clients costs n copies and touches every connection's memory; at
/// thousands of broadcasts a second that memory traffic was the server's limit. Here a broadcast costs one copy,
/// and the followers are woken once per pass of the loop, however many frames arrived in it.
///
/// A follower more than `lagLimit` bytes behind whose socket then takes nothing for `stallLimit` stops following and
/// is reported to the delegate (`connectionDidFallBehind`), so one stalled reader neither holds memory nor slows the
/// others. Lag alone is not enough: a group commit can release more than `lagLimit` at once to readers that drain it
/// in the next few writes.
///
/// Followers that agreed on permessage-deflate read the frames' compressed forms from a lane of their own: each frame
/// is compressed once, when it is appended (only while such a follower exists), and shared like the plain bytes.
///
/// Loop-bound: use it only on its server's loop thread.
public final class BroadcastStream {
    /// How far behind its lane's head a follower may fall before its progress is watched.
    public let lagLimit: Int
    /// How long a follower past `lagLimit` may write nothing before it is dropped from the stream.
    public let stallLimit: Duration
    private unowned let server: WebSocketServer
    /// How long the stream's clock has run: stalls are timed by it.
    private let elapsed: () -> Duration
    /// Frames as they were appended, and their permessage-deflate forms.
    let plain = BroadcastLane()
    let deflated = BroadcastLane()
    /// Followers, each knowing its index here. Unretained: a connection leaves the list before it goes away.
    private(set) var followers: [Unmanaged<WebSocketConnection>] = []
    /// How many connections follow the stream.
    public var followerCount: Int { followers.count }
    /// Bytes of frame storage held for followers that have not written them yet.
    public var storedBytes: Int { plain.storedBytes + deflated.storedBytes }
    /// Bytes ever appended in plain form.
    public var head: Int { plain.head }
    /// A wake is scheduled for the end of this pass of the loop.
    var wakeScheduled = false

    /// A stream on `server`'s loop; followers may lag `lagLimit` bytes, and past that stall for `stallLimit` as
    /// `elapsed` tells time: the time a clock has run, the continuous clock's unless the owner has one of its own
    /// (the server's, which a test advances instead of sleeping).
    public init(
        server: WebSocketServer, lagLimit: Int, stallLimit: Duration = .seconds(1),
        elapsed: @escaping () -> Duration = { [start = ContinuousClock.now] in start.duration(to: .now) }
    ) {
        self.server = server
        self.lagLimit = lagLimit
        self.stallLimit = stallLimit
        self.elapsed = elapsed
    }

    deinit {
        for follower in followers { follower.takeUnretainedValue().streamDidEnd() }
    }

    /// Where one appended frame lies in each lane: a follower may be given a frame of its own in its place
    /// (``WebSocketConnection/substitute(_:for:)``), so followers that see a message differently still share the
    /// stream for every message they see alike.
    public struct Mark: Sendable {
        let plain: Range<Int>
        let deflated: Range<Int>
    }

    /// Appends one frame for every follower, compressed once for those that agreed on permessage-deflate; they are
    /// woken at the end of this pass of the loop.
    @discardableResult
    public func append(_ frame: OutboundFrame) -> Mark {
        let start = (plain.head, deflated.head)
        guard frame.byteCount > 0 else { return Mark(plain: start.0..<start.0, deflated: start.1..<start.1) }
        if plain.followerCount > 0 { plain.append(frame) }
        if deflated.followerCount > 0 { deflated.append(server.deflated(frame)) }
        if !wakeScheduled {
            wakeScheduled = true
            server.scheduleWake(self)
        }
        return Mark(plain: start.0..<plain.head, deflated: start.1..<deflated.head)
    }

    /// Has every follower with frames write them (the connection's `flush()`); drops followers that fell too far behind
    /// and the chunks no follower needs. Runs once per pass of the loop in which frames were appended.
    func wake() {
        wakeScheduled = false
        var oldestPlain = plain.head
        var oldestDeflated = deflated.head
        var fallen: [WebSocketConnection] = []
        var now: Duration?
        for follower in followers {
            let connection = follower.takeUnretainedValue()
            let position = connection.streamPosition
            let lane = connection.lane!
            if lane.head - position > lagLimit, hasStalled(connection, now: &now) {
                fallen.append(connection)
            } else {
                if lane === plain { oldestPlain = min(oldestPlain, position) } else {
                    oldestDeflated = min(oldestDeflated, position)
                }
                if position < lane.head { connection.flush() }
            }
        }
        plain.release(before: oldestPlain)
        deflated.release(before: oldestDeflated)
        for connection in fallen {
            connection.unfollow()
            server.delegate.connectionDidFallBehind(connection)
        }
    }

    /// Whether `connection`, past the lag limit, has written nothing for `stallLimit`. The clock starts at the first
    /// wake that finds it past the limit and restarts whenever it has written since; `now` is read once per wake.
    private func hasStalled(_ connection: WebSocketConnection, now: inout Duration?) -> Bool {
        let instant = now ?? elapsed()
        now = instant
        if let since = connection.stalledSince, connection.stalledPosition == connection.streamPosition {
            return instant - since > stallLimit
        }
        connection.stalledSince = instant
        connection.stalledPosition = connection.streamPosition
        return false
    }

    /// Where `connection` starts: at its lane's head, receiving what is appended from now on.
    func add(_ connection: WebSocketConnection) {
        let lane = connection.compressesMessages ? deflated : plain
        lane.followerCount += 1
        connection.lane = lane
        connection.followerIndex = followers.count
        connection.streamPosition = lane.head
        connection.stalledSince = nil
        followers.append(Unmanaged.passUnretained(connection))
    }

    func remove(_ connection: WebSocketConnection) {
        let index = connection.followerIndex
        guard index >= 0, index < followers.count, followers[index].takeUnretainedValue() === connection,
            let lane = connection.lane
        else { return }
        if connection.streamPosition < lane.head { lane.caughtUp() }
        lane.followerCount -= 1
        followers.swapAt(index, followers.count - 1)
        followers[index].takeUnretainedValue().followerIndex = index
        followers.removeLast()
        connection.followerIndex = -1
    }
}

@available(*, unavailable)
extension BroadcastStream: Sendable {}
