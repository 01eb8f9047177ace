import DequeModule
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

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
/// Loop-bound: use it only on its server's loop thread.
public final class BroadcastStream {
    /// Whole frames from position `start`; a frame never spans two chunks.
    struct Chunk {
        let base: UnsafeMutableRawPointer
        let start: Int
        let capacity: Int
        var count: Int
        var end: Int { start + count }
    }

    /// Bytes ever appended: the position just past the newest frame.
    public private(set) var head = 0
    /// How far behind `head` a follower may fall before its progress is watched.
    public let lagLimit: Int
    /// How long a follower past `lagLimit` may write nothing before it is dropped from the stream.
    public let stallLimit: Duration
    private unowned let server: WebSocketServer
    private var chunks: Deque<Chunk> = []
    /// The next chunk's size: small for a quiet stream, growing while frames keep coming.
    private var nextChunkCapacity = minimumChunk
    /// Followers, each knowing its index here. Unretained: a connection leaves the list before it goes away.
    private(set) var followers: [Unmanaged<WebSocketConnection>] = []
    /// How many connections follow the stream.
    public var followerCount: Int { followers.count }
    /// Bytes of frame storage held for followers that have not written them yet.
    public var storedBytes: Int { chunks.reduce(0) { $0 + $1.capacity } }
    /// Followers whose position is before `head`; when none is, no chunk is needed any more.
    private var behind = 0
    /// A wake is scheduled for the end of this pass of the loop.
    var wakeScheduled = false

    private static let minimumChunk = 4096
    private static let maximumChunk = 64 * 1024

    /// A stream on `server`'s loop; followers may lag `lagLimit` bytes, and past that stall for `stallLimit`.
    public init(server: WebSocketServer, lagLimit: Int, stallLimit: Duration = .seconds(1)) {
        self.server = server
        self.lagLimit = lagLimit
        self.stallLimit = stallLimit
    }

    deinit {
        for follower in followers { follower.takeUnretainedValue().streamDidEnd() }
        for chunk in chunks { free(chunk.base) }
    }

    /// Appends one frame for every follower; they are woken at the end of this pass of the loop.
    public func append(_ frame: OutboundFrame) {
        let count = frame.byteCount
        guard count > 0 else { return }
        if chunks.isEmpty || chunks[chunks.count - 1].count + count > chunks[chunks.count - 1].capacity {
            let capacity = max(count, nextChunkCapacity)
            nextChunkCapacity = min(Self.maximumChunk, 2 * nextChunkCapacity)
            chunks.append(Chunk(base: malloc(capacity)!, start: head, capacity: capacity, count: 0))
        }
        let last = chunks.count - 1
        (chunks[last].base + chunks[last].count).copyMemory(from: frame.bytes.baseAddress!, byteCount: count)
        chunks[last].count += count
        head += count
        behind = followers.count
        if !wakeScheduled {
            wakeScheduled = true
            server.scheduleWake(self)
        }
    }

    /// Asks every follower with frames to write for a writeable callback; drops followers that fell too far behind
    /// and the chunks no follower needs. Runs once per pass of the loop in which frames were appended.
    func wake() {
        wakeScheduled = false
        var oldest = head
        var fallen: [WebSocketConnection] = []
        var now: ContinuousClock.Instant?
        for follower in followers {
            let connection = follower.takeUnretainedValue()
            let position = connection.streamPosition
            if head - position > lagLimit, hasStalled(connection, now: &now) {
                fallen.append(connection)
            } else {
                oldest = min(oldest, position)
                if position < head { connection.requestWritable() }
            }
        }
        while let first = chunks.first, first.end <= oldest, chunks.count > 1 || first.end == head {
            free(first.base)
            chunks.removeFirst()
        }
        for connection in fallen {
            connection.unfollow()
            server.delegate.connectionDidFallBehind(connection)
        }
    }

    /// Whether `connection`, past the lag limit, has written nothing for `stallLimit`. The clock starts at the first
    /// wake that finds it past the limit and restarts whenever it has written since; `now` is read once per wake.
    private func hasStalled(_ connection: WebSocketConnection, now: inout ContinuousClock.Instant?) -> Bool {
        let instant = now ?? .now
        now = instant
        if let since = connection.stalledSince, connection.stalledPosition == connection.streamPosition {
            return since.duration(to: instant) > stallLimit
        }
        connection.stalledSince = instant
        connection.stalledPosition = connection.streamPosition
        return false
    }

    /// Where `connection` starts: at `head`, receiving what is appended from now on.
    func add(_ connection: WebSocketConnection) {
        connection.followerIndex = followers.count
        connection.streamPosition = head
        connection.stalledSince = nil
        followers.append(Unmanaged.passUnretained(connection))
    }

    func remove(_ connection: WebSocketConnection) {
        let index = connection.followerIndex
        guard index >= 0, index < followers.count, followers[index].takeUnretainedValue() === connection else { return }
        if connection.streamPosition < head { caughtUp() }
        followers.swapAt(index, followers.count - 1)
        followers[index].takeUnretainedValue().followerIndex = index
        followers.removeLast()
        connection.followerIndex = -1
    }

    /// A follower reached `head` (or left while behind it). Once every follower has, the chunks go.
    func caughtUp() {
        behind -= 1
        guard behind == 0 else { return }
        for chunk in chunks { free(chunk.base) }
        chunks.removeAll()
        nextChunkCapacity = Self.minimumChunk
    }

    /// The frames from `position`, up to `end`, that lie in one chunk: as many whole frames as fit in `limit`, or
    /// the first frame alone if it is bigger.
    func span(from position: Int, to end: Int, limit: Int) -> UnsafeRawBufferPointer {
        var index = chunks.count - 1
        while chunks[index].start > position { index -= 1 }
        let chunk = chunks[index]
        let available = min(end, chunk.end) - position
        let start = UnsafeRawPointer(chunk.base + (position - chunk.start))
        let length = available <= limit ? available : FrameHeader.wholeFrames(at: start, count: available, upTo: limit)
        return UnsafeRawBufferPointer(start: start, count: length)
    }
}

@available(*, unavailable)
extension BroadcastStream: Sendable {}
