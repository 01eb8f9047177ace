internal import CZlib

/// Compresses whole messages for permessage-deflate, each on its own (`server_no_context_takeover`), so the result
/// depends only on the message and one compressed copy serves every deflate client. One per server, used on its
/// loop thread only: zlib's deflate state (about 256 KiB) exists once, not per connection.
final class MessageDeflater {
    private let stream: UnsafeMutablePointer<z_stream>

    /// zlib's default level: most of the gain of the highest level at a fraction of its cost.
    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_deflateInitRaw(stream, Z_DEFAULT_COMPRESSION, 15, 8)
        precondition(status == Z_OK, "zlib cannot start a deflate stream: \(status)")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// `payload` as one compressed message (RFC 7692 §7.2.1): raw deflate flushed to a byte boundary, without the
    /// final `00 00 FF FF` the flush ends with.
    func compress(_ payload: UnsafeRawBufferPointer) -> [UInt8] {
        deflateReset(stream)
        // A sync flush adds a few bytes to deflate's own bound.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, uLong(payload.count))) + 16)
        var produced = 0
        stream.pointee.next_in = UnsafeMutablePointer(
            mutating: payload.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(payload.count)
        while true {
            let status = output.withUnsafeMutableBufferPointer { buffer in
                stream.pointee.next_out = buffer.baseAddress! + produced
                stream.pointee.avail_out = uInt(buffer.count - produced)
                let status = deflate(stream, Z_SYNC_FLUSH)
                produced = buffer.count - Int(stream.pointee.avail_out)
                return status
            }
            precondition(status == Z_OK || status == Z_BUF_ERROR, "zlib deflate failed: \(status)")
            if stream.pointee.avail_in == 0, stream.pointee.avail_out > 0 { break }
            output += [UInt8](repeating: 0, count: output.count)
        }
        output.removeSubrange(produced...)
        if output.count >= 4, output.suffix(4).elementsEqual([0x00, 0x00, 0xFF, 0xFF]) { output.removeLast(4) }
        return output
    }
}

@available(*, unavailable)
extension MessageDeflater: Sendable {}
