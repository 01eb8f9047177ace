/// Splits the bytes a server sends into WebSocket messages (RFC 6455 §5), lending each message in place when it
/// arrived whole in one read and reassembling only what spans reads or fragments.
///
/// libwebsockets' client parser makes one function call per received byte, which left a load generator reading
/// hundreds of thousands of patches a second spending most of its time there; this costs one header decode per
/// frame.
struct ClientFrameReader {
    /// What a chunk of input produced, lent for the duration of the handler call only.
    enum Event {
        /// `compressed`: the message is permessage-deflate data, to inflate.
        case message(UnsafeRawBufferPointer, binary: Bool, compressed: Bool)
        /// A message over the limit, with its size, once it has ended; its payload was skipped, never buffered.
        case tooLarge(Int)
        case ping(UnsafeRawBufferPointer)
        /// The peer's close frame: its code (nil when it sent none) and reason.
        case close(code: UInt16?, reason: UnsafeRawBufferPointer)
    }

    /// The peer broke the framing rules; the connection must close with 1002.
    struct ProtocolViolation: Error {
        let message: String
    }

    private let limit: Int
    /// The bytes of a header that did not arrive whole.
    private var header: [UInt8] = []
    /// The current frame: opcode, FIN and payload bytes still to come; nil between frames.
    private var frame: (opcode: UInt8, isFinal: Bool, remaining: Int)?
    /// Payload of an unfinished control frame.
    private var control: [UInt8] = []
    /// Payload of an unfinished data message (fragments, or a frame that spans reads).
    private var message: [UInt8] = []
    /// A data message has started (its first frame had no FIN) and continuation frames are expected.
    private var inMessage = false
    private var messageIsBinary = false
    private var messageIsCompressed = false
    /// permessage-deflate was agreed: a message's first frame may carry RSV1.
    var acceptsCompressed = false
    private var messageSize = 0
    /// The current message went over the limit: its remaining payload is skipped.
    private var skipping = false

    init(limit: Int) {
        self.limit = limit
    }

    /// Reads `chunk`, calling `handle` for every event it completes; stops early if `handle` returns false.
    mutating func consume(
        _ chunk: UnsafeRawBufferPointer, _ handle: (Event) -> Bool
    ) throws(ProtocolViolation) {
        var cursor = 0
        while cursor < chunk.count {
            guard let current = frame else {
                guard let parsed = try readHeader(chunk, &cursor) else { return }
                if canLend(parsed, available: chunk.count - cursor) {
                    let payload = UnsafeRawBufferPointer(rebasing: chunk[cursor..<cursor + parsed.remaining])
                    cursor += parsed.remaining
                    if !finish(parsed, payload: payload, handle) { return }
                } else if parsed.remaining == 0 {
                    if !finishBuffered(parsed, handle) { return }
                } else {
                    frame = parsed
                }
                continue
            }
            let take = min(current.remaining, chunk.count - cursor)
            let piece = UnsafeRawBufferPointer(rebasing: chunk[cursor..<cursor + take])
            cursor += take
            if current.opcode >= 0x8 {
                control.append(contentsOf: piece)
            } else if !skipping {
                message.append(contentsOf: piece)
            }
            let remaining = current.remaining - take
            guard remaining == 0 else {
                frame = (current.opcode, current.isFinal, remaining)
                continue
            }
            frame = nil
            if !finishBuffered(current, handle) { return }
        }
    }

    /// A whole frame that is a whole message (or control frame) and lies entirely in this read: lend it as is.
    private func canLend(_ frame: (opcode: UInt8, isFinal: Bool, remaining: Int), available: Int) -> Bool {
        frame.remaining <= available && (frame.opcode >= 0x8 || (frame.isFinal && message.isEmpty && !skipping))
    }

    /// Decodes the next frame header, buffering it if it is split across reads; nil when more bytes are needed.
    private mutating func readHeader(
        _ chunk: UnsafeRawBufferPointer, _ cursor: inout Int
    ) throws(ProtocolViolation) -> (opcode: UInt8, isFinal: Bool, remaining: Int)? {
        // Work on the buffered header bytes plus this read, without copying in the usual whole-header case.
        func byte(_ index: Int) -> UInt8? {
            if index < header.count { return header[index] }
            let offset = cursor + index - header.count
            return offset < chunk.count ? chunk[offset] : nil
        }
        guard let first = byte(0), let second = byte(1) else { return bufferHeader(chunk, &cursor) }
        let opcodeBits = first & 0x0F
        let compressed = first & 0x40 != 0
        if first & 0x30 != 0 || (compressed && !(acceptsCompressed && (opcodeBits == 0x1 || opcodeBits == 0x2))) {
            throw ProtocolViolation(message: "reserved bits set without an extension")
        }
        if second & 0x80 != 0 { throw ProtocolViolation(message: "a server frame is masked") }
        let opcode = first & 0x0F
        let isFinal = first & 0x80 != 0
        let lengthBytes = second & 0x7F == 126 ? 2 : (second & 0x7F == 127 ? 8 : 0)
        guard byte(1 + lengthBytes) != nil else { return bufferHeader(chunk, &cursor) }
        var length = UInt64(second & 0x7F)
        if lengthBytes > 0 {
            length = 0
            for index in 0..<lengthBytes { length = length << 8 | UInt64(byte(2 + index)!) }
            if length >> 63 != 0 { throw ProtocolViolation(message: "a frame length has its top bit set") }
        }
        cursor += 2 + lengthBytes - header.count
        header.removeAll(keepingCapacity: true)
        let remaining = Int(length)
        switch opcode {
        case 0x8, 0x9, 0xA:
            guard isFinal, remaining <= 125 else {
                throw ProtocolViolation(message: "a control frame is fragmented or too long")
            }
            control.removeAll(keepingCapacity: true)
        case 0x0:
            guard inMessage else { throw ProtocolViolation(message: "a continuation frame without a message") }
            try startPayload(remaining)
        case 0x1, 0x2:
            guard !inMessage else { throw ProtocolViolation(message: "a new message inside a fragmented one") }
            inMessage = true
            messageIsBinary = opcode == 0x2
            messageIsCompressed = compressed
            messageSize = 0
            skipping = false
            try startPayload(remaining)
        default:
            throw ProtocolViolation(message: "unknown opcode \(opcode)")
        }
        return (opcode, isFinal, remaining)
    }

    /// Keeps the start of a header that the read cut off.
    private mutating func bufferHeader(_ chunk: UnsafeRawBufferPointer, _ cursor: inout Int) -> (UInt8, Bool, Int)? {
        header.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[cursor...]))
        cursor = chunk.count
        return nil
    }

    /// Counts a data frame's payload against the message limit.
    private mutating func startPayload(_ length: Int) throws(ProtocolViolation) {
        messageSize += length
        if !skipping, messageSize > limit {
            skipping = true
            message = []
        }
    }

    /// A frame whose payload was buffered has ended.
    private mutating func finishBuffered(
        _ frame: (opcode: UInt8, isFinal: Bool, remaining: Int), _ handle: (Event) -> Bool
    ) -> Bool {
        guard frame.opcode >= 0x8 || frame.isFinal else { return true }
        // Moved out while lent, then back, so the buffer keeps its capacity for the next message.
        var payload: [UInt8] = []
        if frame.opcode >= 0x8 { swap(&payload, &control) } else { swap(&payload, &message) }
        let proceed = payload.withUnsafeBytes { finish(frame, payload: $0, handle) }
        payload.removeAll(keepingCapacity: true)
        if frame.opcode >= 0x8 { swap(&payload, &control) } else { swap(&payload, &message) }
        return proceed
    }

    /// Reports a completed control frame or message.
    private mutating func finish(
        _ frame: (opcode: UInt8, isFinal: Bool, remaining: Int), payload: UnsafeRawBufferPointer,
        _ handle: (Event) -> Bool
    ) -> Bool {
        switch frame.opcode {
        case 0x8:
            let code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
            let reason = UnsafeRawBufferPointer(rebasing: payload[min(2, payload.count)...])
            return handle(.close(code: code, reason: reason))
        case 0x9:
            return handle(.ping(payload))
        case 0xA:
            return true
        default:
            inMessage = false
            if skipping {
                skipping = false
                return handle(.tooLarge(messageSize))
            }
            return handle(.message(payload, binary: messageIsBinary, compressed: messageIsCompressed))
        }
    }
}
