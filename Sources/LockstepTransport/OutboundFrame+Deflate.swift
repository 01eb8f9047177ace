import Synchronization

extension OutboundFrame {
    /// This message as a permessage-deflate client receives it: compressed once, on first use, RSV1 set. The frame
    /// itself when its payload is shorter than `minimumPayload`, would not shrink, or it is not a data frame. Loop
    /// thread of the server owning `deflater`.
    func deflated(by deflater: MessageDeflater, minimumPayload: Int) -> OutboundFrame {
        let known = deflatedForm.withLock { $0 }
        switch known {
        case .same: return self
        case .compressed(let frame): return frame
        case .unknown: break
        }
        let start = UnsafeRawPointer(bytes.baseAddress!)
        let opcode = start.load(as: UInt8.self) & 0x0F
        let headerCount = bytes.count - FrameHeader.payloadCount(at: start)
        let payload = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[headerCount...])
        var form = DeflatedForm.same
        if opcode == 0x1 || opcode == 0x2, payload.count >= minimumPayload {
            let compressed = deflater.compress(payload)
            if compressed.count < payload.count {
                form = .compressed(OutboundFrame(opcode: opcode, compressed: true, payload: compressed))
            }
        }
        deflatedForm.withLock { $0 = form }
        if case .compressed(let frame) = form { return frame }
        return self
    }
}
