extension OutboundFrame {
    /// The message the frame carries, without its header: what the client received, byte for byte.
    public var payload: [UInt8] {
        withPayload { Array($0) }
    }

    /// Calls `body` with the message the frame carries, in place: what ``payload`` copies out.
    public func withPayload<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let base = UnsafeRawPointer(bytes.baseAddress!)
        let headerCount = FrameHeader.size(payloadCount: 0) + headerExtension(at: base)
        return try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[headerCount...]))
    }

    /// Bytes of extended length after the two-byte header of the unmasked frame at `frame`.
    private func headerExtension(at frame: UnsafeRawPointer) -> Int {
        switch frame.load(fromByteOffset: 1, as: UInt8.self) & 0x7F {
        case 126: 2
        case 127: 8
        default: 0
        }
    }
}
