/// One whole inbound WebSocket message, fragments already reassembled, so handlers never see partial data.
public enum InboundMessage: Sendable, Equatable {
    /// A text message's bytes, not validated as UTF-8 (the owner decides how to answer invalid text).
    case text([UInt8])
    /// A binary message's bytes.
    case binary([UInt8])
    /// A message larger than the configured limit; its payload was dropped, never buffered. A server reports it as
    /// soon as the limit is crossed, with a lower bound of the size (bytes seen plus the rest of the current frame);
    /// a client once the message has ended, with its size.
    case tooLarge(Int)
}
