/// Reads the headers of unmasked frames this process built, to cut a run of frames at a frame boundary.
enum FrameHeader {
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
