internal import CZlib

/// Inflates one connection's compressed messages as their pieces arrive, and never past a limit: a message that
/// would inflate beyond it is reported as soon as the output crosses it, so a small frame that would inflate to
/// gigabytes costs one limit's worth of work and memory. Keeps its 32 KiB window between messages only while the
/// client may refer back to them (context takeover).
final class MessageInflater {
    /// Compressed data zlib cannot inflate: the connection must close (1007).
    struct Failure: Error, Equatable {
        let message: String
    }

    private let stream: UnsafeMutablePointer<z_stream>
    /// Inflated bytes are produced here, then appended to the message.
    private var scratch = [UInt8](repeating: 0, count: 16 * 1024)

    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_inflateInitRaw(stream)
        precondition(status == Z_OK, "zlib cannot start an inflate stream: \(status)")
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Inflates `input` onto the end of `message`; false as soon as `message` holds more than `limit` bytes (the rest
    /// of `input` is left alone).
    func inflate(_ input: UnsafeRawBufferPointer, into message: inout [UInt8], limit: Int) throws(Failure) -> Bool {
        guard let base = input.baseAddress, input.count > 0 else { return true }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        while true {
            var status: Int32 = Z_OK
            let produced = scratch.withUnsafeMutableBufferPointer { buffer in
                stream.pointee.next_out = buffer.baseAddress
                stream.pointee.avail_out = uInt(buffer.count)
                status = CZlib.inflate(stream, Z_SYNC_FLUSH)
                return buffer.count - Int(stream.pointee.avail_out)
            }
            message.append(contentsOf: scratch[..<produced])
            if message.count > limit { return false }
            switch status {
            case Z_OK:
                if stream.pointee.avail_in == 0, stream.pointee.avail_out > 0 { return true }
            case Z_BUF_ERROR:
                return true
            case Z_STREAM_END:
                // A final block ends this deflate stream; what follows starts a new one.
                inflateReset(stream)
                if stream.pointee.avail_in == 0 { return true }
            default:
                throw Failure(message: "invalid permessage-deflate data")
            }
        }
    }

    /// Ends a message: inflates the `00 00 FF FF` the sender left out.
    func finish(into message: inout [UInt8], limit: Int) throws(Failure) -> Bool {
        let tail = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 1)
        defer { tail.deallocate() }
        tail.copyBytes(from: [0x00, 0x00, 0xFF, 0xFF])
        return try inflate(UnsafeRawBufferPointer(tail), into: &message, limit: limit)
    }
}

@available(*, unavailable)
extension MessageInflater: Sendable {}
