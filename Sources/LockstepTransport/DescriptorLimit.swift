/// The process's limit on open file descriptors (`RLIMIT_NOFILE`) as a server found and left it at start. Every
/// connection holds one descriptor, so this, not memory, is what usually bounds the clients one process can serve.
public struct DescriptorLimit: Sendable, Equatable {
    /// The soft limit before the server raised it.
    public let softBefore: Int
    /// The soft limit now: where `accept` starts failing with `EMFILE`.
    public let soft: Int
    /// The hard limit: the highest an unprivileged process may raise its soft limit to.
    public let hard: Int
    /// Descriptors open once the server was listening (standard streams, sockets, files, its reserve).
    public let inUse: Int

    /// Whether the server raised the soft limit (to the hard one).
    public var wasRaised: Bool { soft > softBefore }

    /// Connections the descriptors left at start allow: one each.
    public var connections: Int { max(0, soft - inUse) }

    /// Describes the limit for a log line or an error message.
    public var description: String {
        "soft \(soft), hard \(hard)" + (wasRaised ? " (soft raised from \(softBefore))" : "")
    }
}
