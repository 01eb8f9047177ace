internal import CLibWebSockets

/// A complete, unmasked server-to-client WebSocket frame, encoded once so one broadcast can be queued on thousands
/// of connections without copying or re-encoding.
public final class OutboundFrame: Sendable {
    /// `LWS_PRE` bytes of headroom, then the frame header, then the payload; immutable after init.
    let storage: [UInt8]

    /// The size of the frame on the wire (header plus payload); what it adds to a connection's queue.
    public var byteCount: Int { storage.count - CLibWebSockets_LWS_PRE }

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
        let pre = CLibWebSockets_LWS_PRE
        let count = payload.count
        let headerCount = count < 126 ? 2 : (count <= 0xFFFF ? 4 : 10)
        var bytes = [UInt8](repeating: 0, count: pre + headerCount)
        bytes.reserveCapacity(pre + headerCount + count)
        bytes[pre] = 0x80 | opcode
        switch headerCount {
        case 2:
            bytes[pre + 1] = UInt8(count)
        case 4:
            bytes[pre + 1] = 126
            bytes[pre + 2] = UInt8(truncatingIfNeeded: count >> 8)
            bytes[pre + 3] = UInt8(truncatingIfNeeded: count)
        default:
            bytes[pre + 1] = 127
            for index in 0..<8 {
                bytes[pre + 2 + index] = UInt8(truncatingIfNeeded: UInt64(count) >> (56 - 8 * UInt64(index)))
            }
        }
        bytes.append(contentsOf: payload)
        storage = bytes
    }
}
