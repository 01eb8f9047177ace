/// Every failure the transport reports, so callers can switch over one closed set instead of parsing messages.
public enum TransportError: Error, Sendable, Equatable {
    /// libwebsockets could not create a context (for a server: usually the address or port cannot be bound).
    case contextCreationFailed(String)
    /// The URL is not a plain `ws://host[:port][/path][?query]` URL.
    case invalidURL(String)
    /// The connection could not be opened, or the handshake was refused; the text is libwebsockets' reason.
    case connectionFailed(String)
    /// The client or server was already shut down.
    case shutDown
}
