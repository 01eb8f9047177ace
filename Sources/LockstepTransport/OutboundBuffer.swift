internal import CLibWebSockets
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The bytes of whole frames waiting for one connection, contiguous so that one write hands them all to the
/// socket, with the `LWS_PRE` headroom libwebsockets requires in front.
///
/// A broadcast copies its frame in here (a memcpy of a few hundred bytes) instead of queueing a reference: no
/// reference count traffic per delivery, and the write needs no gathering. An empty buffer holds no memory, so idle
/// connections cost nothing here.
struct OutboundBuffer: ~Copyable {
    /// `LWS_PRE` bytes of headroom, then `capacity` bytes; nil while empty.
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    /// The unsent bytes are `start..<end`, counted after the headroom.
    private var start = 0
    private var end = 0

    init() {}

    deinit { free(base) }

    /// Bytes waiting.
    var count: Int { end - start }

    /// The first waiting byte, with `LWS_PRE` writable bytes before it (already sent ones, or the headroom).
    var head: UnsafeMutablePointer<UInt8> {
        (base! + CLibWebSockets_LWS_PRE + start).assumingMemoryBound(to: UInt8.self)
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        appendUninitialized(bytes.count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
    }

    /// Adds `count` bytes at the end and returns where they start, for the caller to fill in.
    mutating func appendUninitialized(_ count: Int) -> UnsafeMutableRawPointer {
        if end + count > capacity { makeRoom(for: count) }
        defer { end += count }
        return base! + CLibWebSockets_LWS_PRE + end
    }

    /// Takes back the last `length` bytes appended (reserved with `appendUninitialized` but not filled).
    mutating func removeLast(_ length: Int) {
        end -= length
        if start == end { removeAll() }
    }

    /// Forgets the first `length` bytes (they were written); memory goes back once nothing is left.
    mutating func removeFirst(_ length: Int) {
        start += length
        if start == end { removeAll() }
    }

    mutating func removeAll() {
        free(base)
        base = nil
        capacity = 0
        start = 0
        end = 0
    }

    /// Moves the waiting bytes to the front, into a bigger allocation when they and `extra` do not fit.
    private mutating func makeRoom(for extra: Int) {
        let waiting = count
        if let base, waiting + extra <= capacity {
            let front = base + CLibWebSockets_LWS_PRE
            memmove(front, front + start, waiting)
        } else {
            // A few kilobytes hold a typical turn's frames without growing again.
            let grown = max(4096 - CLibWebSockets_LWS_PRE, 2 * (waiting + extra))
            let fresh = malloc(CLibWebSockets_LWS_PRE + grown)!
            if let base {
                (fresh + CLibWebSockets_LWS_PRE).copyMemory(
                    from: base + CLibWebSockets_LWS_PRE + start, byteCount: waiting)
                free(base)
            }
            base = fresh
            capacity = grown
        }
        start = 0
        end = waiting
    }
}
