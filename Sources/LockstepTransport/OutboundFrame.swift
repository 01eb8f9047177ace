import Synchronization

/// A complete, unmasked server-to-client WebSocket frame, encoded once so one broadcast reaches thousands of
/// connections without re-encoding; its permessage-deflate form, too, is made once, on first use.
// @unchecked Sendable: `bytes` is written only in init and freed in deinit; it is immutable in between.
public final class OutboundFrame: @unchecked Sendable {
    /// The frame header, then the payload. A plain pointer rather than an array, so that reading it for each of a
    /// thousand connections costs no reference counting.
    let bytes: UnsafeMutableRawBufferPointer
    /// The frame deflate clients get, once made (`deflated(by:minimumPayload:)`).
    let deflatedForm = Mutex(DeflatedForm.unknown)

    /// What a deflate client receives in place of this frame.
    enum DeflatedForm {
        case unknown
        /// This frame itself: a small or incompressible payload, or a control frame.
        case same
        case compressed(OutboundFrame)
    }

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

    private convenience init(opcode: UInt8, payload: [UInt8]) {
        self.init(opcode: opcode, compressed: false, payload: payload)
    }

    /// With `compressed`, RSV1 is set: the payload is a permessage-deflate message.
    init(opcode: UInt8, compressed: Bool, payload: [UInt8]) {
        bytes = .allocate(byteCount: FrameHeader.size(payloadCount: payload.count) + payload.count, alignment: 16)
        let header = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let headerCount = FrameHeader.write(opcode: opcode, payloadCount: payload.count, masked: false, to: header)
        if compressed { header[0] |= 0x40 }
        payload.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: bytes[headerCount...]).copyMemory(from: $0) }
    }

    deinit { bytes.deallocate() }
}
