/// Every failure the transport reports, so callers can switch over one closed set instead of parsing messages.
public enum TransportError: Error, Sendable, Equatable {
    /// libwebsockets could not create a context (for a server: usually the address or port cannot be bound).
    case contextCreationFailed(String)
    /// The TLS certificate or key cannot be read or used; the text says which file and why.
    case tlsSetupFailed(String)
    /// The URL is not a `ws://` or `wss://host[:port][/path][?query]` URL.
    case invalidURL(String)
    /// The connection could not be opened, or the handshake was refused; the text is libwebsockets' reason.
    case connectionFailed(String)
    /// The client or server was already shut down.
    case shutDown
    /// Another process (or another server in this one) is bound to the address a server was to listen on.
    case addressInUse(host: String, port: Int)
    /// A server's address cannot be listened on for another reason, given by the system.
    case cannotListen(host: String, port: Int, reason: String)

    /// What went wrong, for a person.
    public var message: String {
        switch self {
        case .contextCreationFailed(let text), .tlsSetupFailed(let text), .connectionFailed(let text): text
        case .invalidURL(let url): "not a ws:// or wss:// URL: \(url)"
        case .shutDown: "the client or server was shut down"
        case .addressInUse(let host, let port): "port \(port) on \(host) is already in use by another process"
        case .cannotListen(let host, let port, let reason): "cannot listen on \(host):\(port): \(reason)"
        }
    }
}
