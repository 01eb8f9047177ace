/// Reassembles the chunks libwebsockets hands over into whole messages, dropping oversized ones without buffering.
struct MessageAssembler {
    private var buffer: [UInt8] = []
    private var inMessage = false
    private var isBinary = false
    private var size = 0
    private var oversized = false

    /// Consumes one chunk; returns a message when one completes or first crosses `limit`.
    mutating func consume(
        _ chunk: UnsafeRawBufferPointer, binary: Bool, isFinal: Bool, remainingInFrame: Int, limit: Int
    ) -> InboundMessage? {
        if !inMessage {
            inMessage = true
            isBinary = binary
            size = 0
            oversized = false
        }
        size += chunk.count
        if oversized {
            if isFinal { reset() }
            return nil
        }
        if size + remainingInFrame > limit {
            oversized = true
            buffer = []
            let total = size + remainingInFrame
            if isFinal { reset() }
            return .tooLarge(total)
        }
        if buffer.isEmpty && isFinal {
            // Common case: a whole message in one chunk; build it at its exact size.
            let message = Array(chunk.bindMemory(to: UInt8.self))
            reset()
            return isBinary ? .binary(message) : .text(message)
        }
        if buffer.isEmpty { buffer.reserveCapacity(size + remainingInFrame) }
        buffer.append(contentsOf: chunk.bindMemory(to: UInt8.self))
        guard isFinal else { return nil }
        let message = buffer
        let binaryMessage = isBinary
        reset()
        return binaryMessage ? .binary(message) : .text(message)
    }

    private mutating func reset() {
        buffer = []
        inMessage = false
        oversized = false
        size = 0
    }
}
