/// Where the connection stands, so a UI can say why it is not live and when it will try again.
public enum ConnectionStatus: Sendable, Equatable, CustomStringConvertible {
    /// Opening a connection (the first one, or a reconnection after `failures` failed attempts).
    case connecting(failures: Int)
    /// In sync with the server: patches arrive and requests can be sent.
    case live
    /// Dropped; the next attempt starts after `retryIn`.
    case disconnected(reason: String, retryIn: Duration)
    /// The mirror could not follow the server (a version gap, a patch that does not apply): it reconnects for a
    /// fresh snapshot instead of showing a wrong state.
    case resynchronising(reason: String)
    /// Closed for good, by `close()` or because the first connection failed.
    case closed

    public var description: String {
        switch self {
        case .connecting(let failures): failures == 0 ? "connecting" : "reconnecting (attempt \(failures + 1))"
        case .live: "live"
        case .disconnected(let reason, let delay):
            "disconnected (\(reason)); retrying in \(Self.seconds(delay))"
        case .resynchronising(let reason): "resynchronising (\(reason))"
        case .closed: "closed"
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let millis = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return "\(millis / 1000).\(millis % 1000 / 100) s"
    }
}
