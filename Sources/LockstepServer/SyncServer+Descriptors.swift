import CoreMetrics
import LockstepTransport
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The process's file descriptor limit: said at start, and said again (rate-limited) when it runs out, since every
/// connection holds a descriptor and a server at its limit otherwise just stops accepting without a word.
extension SyncServer {
    /// The open connections accepted: `--max-connections`, else what the descriptor limit allows less a reserve
    /// (``descriptorReserve``), so that a handshake past the limit can still be answered `503`.
    nonisolated var connectionLimit: Int {
        if let asked = configuration.maxConnections { return asked }
        let free = transport.descriptorLimit.connections
        return max(1, free - Self.descriptorReserve(of: free))
    }

    /// Descriptors kept free when the limit sets the connections: for refused handshakes, HTTP requests and storage.
    /// 5 % of those free at start, at least 8.
    static func descriptorReserve(of free: Int) -> Int {
        max(8, free / 20)
    }

    /// Logs the limit found at start and how many connections it leaves room for; warns when that is fewer than
    /// `maxConnections`, when one was given.
    nonisolated func logDescriptorLimit() {
        let limit = transport.descriptorLimit
        metrics.descriptorLimit.set(limit.soft)
        logger.info(
            "file descriptor limit",
            metadata: [
                "soft": "\(limit.soft)", "hard": "\(limit.hard)", "soft-before": "\(limit.softBefore)",
                "raised": "\(limit.wasRaised)", "in-use": "\(limit.inUse)", "connections": "\(limit.connections)",
            ])
        if let asked = configuration.maxConnections, limit.connections < asked {
            logger.notice(
                """
                the file descriptor limit (\(limit.description)) allows about \(limit.connections) connections, \
                fewer than --max-connections (\(asked)): raise the hard limit (ulimit -Hn, \
                systemd LimitNOFILE=, docker --ulimit nofile=) or spread clients over more servers
                """)
        }
    }

    /// The transport could not accept for want of a descriptor and closed the connections waiting: counts them, and
    /// warns when ``DescriptorWarnings`` says one is due.
    func descriptorsRanOut(errno code: Int32, refused: Int) {
        metrics.outOfDescriptors.increment(by: Int64(max(refused, 1)))
        guard let refused = descriptorWarnings.refused(refused, at: clock.now) else { return }
        let limit = transport.descriptorLimit
        let scope =
            code == ENFILE ? "the system's open file table is full (ENFILE)" : "out of file descriptors (EMFILE)"
        logger.warning(
            """
            \(scope): refused \(refused) new connections; \(transport.connectionCount) open \
            WebSocket connections keep being served, and accepting resumes as descriptors come free. Limit: \
            \(limit.description). Raise it (ulimit -n, systemd LimitNOFILE=, docker --ulimit nofile=\
            \(code == ENFILE ? ", sysctl fs.file-max" : "")) or spread clients over more servers; see docs/deploy.md
            """,
            metadata: ["soft": "\(limit.soft)", "hard": "\(limit.hard)", "refused": "\(refused)"])
    }
}
