/// Writes the headers of the frames this process sends, and reads back those of its own unmasked frames to cut a
/// run of frames at a frame boundary.
enum FrameHeader {
    /// The header's size for a payload of `count` bytes: 2, 4 or 10 bytes, plus 4 for a mask key.
    static func size(payloadCount count: Int, masked: Bool = false) -> Int {
        (count < 126 ? 2 : (count <= 0xFFFF ? 4 : 10)) + (masked ? 4 : 0)
    }

    /// Writes a final frame's header at `out`, without the mask key; returns its size (the payload, or the mask key,
    /// goes right after).
    static func write(
        opcode: UInt8, payloadCount count: Int, masked: Bool, to out: UnsafeMutablePointer<UInt8>
    ) -> Int {
        let maskBit: UInt8 = masked ? 0x80 : 0
        out[0] = 0x80 | opcode
        switch size(payloadCount: count) {
        case 2:
            out[1] = maskBit | UInt8(count)
            return 2
        case 4:
            out[1] = maskBit | 126
            out[2] = UInt8(truncatingIfNeeded: count >> 8)
            out[3] = UInt8(truncatingIfNeeded: count)
            return 4
        default:
            out[1] = maskBit | 127
            for index in 0..<8 { out[2 + index] = UInt8(truncatingIfNeeded: UInt64(count) >> (56 - 8 * UInt64(index))) }
            return 10
        }
    }

    /// How many of the `count` bytes at `frames` to write when they are more than `limit`: the whole frames that
    /// fit, or the first frame alone when it is bigger. Only for frames this server built: their headers are trusted.
    static func wholeFrames(at frames: UnsafeRawPointer, count: Int, upTo limit: Int) -> Int {
        var length = 0
        while length < count {
            let size = frameSize(at: frames + length)
            if length > 0, length + size > limit { break }
            length += size
            if length >= limit { break }
        }
        return length
    }

    /// The payload length of the unmasked frame at `frame`.
    static func payloadCount(at frame: UnsafeRawPointer) -> Int {
        let size = frameSize(at: frame)
        switch frame.load(fromByteOffset: 1, as: UInt8.self) & 0x7F {
        case 126: return size - 4
        case 127: return size - 10
        default: return size - 2
        }
    }

    /// Header plus payload of the unmasked frame at `frame`.
    static func frameSize(at frame: UnsafeRawPointer) -> Int {
        let short = Int(frame.load(fromByteOffset: 1, as: UInt8.self) & 0x7F)
        switch short {
        case 126:
            return 4 + (Int(frame.load(fromByteOffset: 2, as: UInt8.self)) << 8
                | Int(frame.load(fromByteOffset: 3, as: UInt8.self)))
        case 127:
            var length = 0
            for index in 2..<10 { length = length << 8 | Int(frame.load(fromByteOffset: index, as: UInt8.self)) }
            return 10 + length
        default:
            return 2 + short
        }
    }
}
