/// A complete, unmasked server-to-client WebSocket frame, encoded once so one broadcast reaches thousands of
/// connections without re-encoding.
// @unchecked Sendable: `bytes` is written only in init and freed in deinit; it is immutable in between.
public final class OutboundFrame: @unchecked Sendable {
    /// The frame header, then the payload. A plain pointer rather than an array, so that reading it for each of a
    /// thousand connections costs no reference counting.
    let bytes: UnsafeMutableRawBufferPointer

    /// The size of the frame on the wire (header plus payload); what it adds to a connection's queue.
    public var byteCount: Int { bytes.count }

    /// Frames one text message (FIN set, opcode 1). The payload is not validated as UTF-8.
    public convenience init(text payload: [UInt8]) {
        self.init(opcode: 0x1, payload: payload)
    }

    /// Frames one text message from a Swift string.
    public convenience init(text: String) {
        self.init(opcode: 0x1, payload: Array(text.utf8))
    }

    /// Frames one binary message (FIN set, opcode 2).
    public convenience init(binary payload: [UInt8]) {
        self.init(opcode: 0x2, payload: payload)
    }

    private init(opcode: UInt8, payload: [UInt8]) {
        bytes = .allocate(byteCount: FrameHeader.size(payloadCount: payload.count) + payload.count, alignment: 16)
        let headerCount = FrameHeader.write(
            opcode: opcode, payloadCount: payload.count, masked: false,
            to: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        payload.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: bytes[headerCount...]).copyMemory(from: $0) }
    }

    deinit { bytes.deallocate() }
}
