/// Reassembles the chunks libwebsockets hands over into whole messages, dropping oversized ones without buffering, and
/// inflating compressed ones (permessage-deflate) as they arrive, within the same limit.
struct MessageAssembler {
    private var buffer: [UInt8] = []
    private var size = 0
    /// Set once the connection agreed on permessage-deflate; nil until then, and between messages when the client
    /// compresses each message on its own.
    private var inflater: MessageInflater?
    // The flags last, together: each connection holds one assembler.
    private var inMessage = false
    private var isBinary = false
    private var isCompressed = false
    private var oversized = false
    /// The client may refer back to earlier messages: the inflater keeps its window between them.
    private var keepsInflater = false

    /// Accepts compressed messages from now on; `contextTakeover` as the handshake agreed.
    mutating func acceptCompressed(contextTakeover: Bool) {
        keepsInflater = contextTakeover
    }

    /// Consumes one chunk; returns a message when one completes or first crosses `limit` (compressed or inflated).
    /// `compressed` is the RSV1 bit of the chunk's frame, which only a message's first frame carries.
    mutating func consume(
        _ chunk: UnsafeRawBufferPointer, binary: Bool, isFinal: Bool, remainingInFrame: Int, limit: Int,
        compressed: Bool = false
    ) throws(MessageInflater.Failure) -> InboundMessage? {
        if !inMessage {
            inMessage = true
            isBinary = binary
            isCompressed = compressed
            size = 0
            oversized = false
        }
        size += chunk.count
        if oversized {
            if isFinal { reset() }
            return nil
        }
        if size + remainingInFrame > limit {
            return tooLarge(size + remainingInFrame, isFinal: isFinal)
        }
        if isCompressed { return try inflate(chunk, isFinal: isFinal, limit: limit) }
        if buffer.isEmpty && isFinal {
            // Common case: a whole message in one chunk; build it at its exact size.
            let message = Array(chunk.bindMemory(to: UInt8.self))
            reset()
            return isBinary ? .binary(message) : .text(message)
        }
        if buffer.isEmpty { buffer.reserveCapacity(size + remainingInFrame) }
        buffer.append(contentsOf: chunk.bindMemory(to: UInt8.self))
        guard isFinal else { return nil }
        return complete()
    }

    private mutating func inflate(
        _ chunk: UnsafeRawBufferPointer, isFinal: Bool, limit: Int
    ) throws(MessageInflater.Failure) -> InboundMessage? {
        let inflater = self.inflater ?? MessageInflater()
        self.inflater = inflater
        do {
            guard try inflater.inflate(chunk, into: &buffer, limit: limit) else {
                return tooLarge(buffer.count, isFinal: isFinal)
            }
            guard isFinal else { return nil }
            guard try inflater.finish(into: &buffer, limit: limit) else { return tooLarge(buffer.count, isFinal: true) }
        } catch {
            self.inflater = nil
            reset()
            throw error
        }
        if !keepsInflater { self.inflater = nil }
        return complete()
    }

    /// The message is over the limit: the rest of it is skipped, never buffered or inflated. An inflater cut off
    /// mid-message is dropped with it (the connection is closed for the oversized message anyway).
    private mutating func tooLarge(_ total: Int, isFinal: Bool) -> InboundMessage {
        oversized = true
        buffer = []
        if isCompressed { inflater = nil }
        if isFinal { reset() }
        return .tooLarge(total)
    }

    private mutating func complete() -> InboundMessage {
        let message = buffer
        let binaryMessage = isBinary
        reset()
        return binaryMessage ? .binary(message) : .text(message)
    }

    private mutating func reset() {
        buffer = []
        inMessage = false
        oversized = false
        isCompressed = false
        size = 0
    }
}
