#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif
import DequeModule

/// One form of a stream's frames, stored once for the followers that take that form: plain frames, or their
/// permessage-deflate versions. Positions count the bytes ever appended to this lane. Loop-bound.
final class BroadcastLane {
    /// Whole frames from position `start`; a frame never spans two chunks.
    struct Chunk {
        let base: UnsafeMutableRawPointer
        let start: Int
        let capacity: Int
        var count: Int
        var end: Int { start + count }
    }

    /// Bytes ever appended: the position just past the newest frame.
    private(set) var head = 0
    private var chunks: Deque<Chunk> = []
    /// The next chunk's size: small for a quiet stream, growing while frames keep coming.
    private var nextChunkCapacity = minimumChunk
    /// Followers of this lane.
    var followerCount = 0
    /// Followers whose position is before `head`; when none is, no chunk is needed any more.
    private var behind = 0
    /// Bytes of frame storage held for followers that have not written them yet.
    var storedBytes: Int { chunks.reduce(0) { $0 + $1.capacity } }

    private static let minimumChunk = 4096
    private static let maximumChunk = 64 * 1024

    deinit {
        for chunk in chunks { free(chunk.base) }
    }

    /// Appends one frame for every follower of this lane.
    func append(_ frame: OutboundFrame) {
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
        behind = followerCount
    }

    /// Frees the chunks that end at or before `oldest`, the earliest position a follower still needs.
    func release(before oldest: Int) {
        while let first = chunks.first, first.end <= oldest, chunks.count > 1 || first.end == head {
            free(first.base)
            chunks.removeFirst()
        }
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
extension BroadcastLane: Sendable {}
