import CoreMetrics
import LockstepTransport
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The process's file descriptor limit: said at start, and said again (rate-limited) when it runs out, since every
/// connection holds a descriptor and a server at its limit otherwise just stops accepting without a word.
extension SyncServer {
    /// Logs the limit found at start and how many connections it leaves room for; warns when that is fewer than
    /// `maxConnections`.
    nonisolated func logDescriptorLimit() {
        let limit = transport.descriptorLimit
        metrics.descriptorLimit.set(limit.soft)
        logger.info(
            "file descriptor limit",
            metadata: [
                "soft": "\(limit.soft)", "hard": "\(limit.hard)", "soft-before": "\(limit.softBefore)",
                "raised": "\(limit.wasRaised)", "in-use": "\(limit.inUse)", "connections": "\(limit.connections)",
            ])
        if limit.connections < configuration.maxConnections {
            logger.notice(
                """
                the file descriptor limit (\(limit.description)) allows about \(limit.connections) connections, \
                fewer than --max-connections (\(configuration.maxConnections)): raise the hard limit (ulimit -Hn, \
                systemd LimitNOFILE=, docker --ulimit nofile=) or spread clients over more servers
                """)
        }
    }

    /// The transport could not accept for want of a descriptor and closed the connections waiting: counts them, and
    /// warns at most once per `descriptorWarningInterval`.
    func descriptorsRanOut(errno code: Int32, refused: Int) {
        metrics.outOfDescriptors.increment(by: Int64(max(refused, 1)))
        descriptorWarning.refused += max(refused, 1)
        let now = clock.now
        if let last = descriptorWarning.at, now - last < configuration.descriptorWarningInterval { return }
        let limit = transport.descriptorLimit
        let scope = code == ENFILE ? "the system's open file table is full (ENFILE)" : "out of file descriptors (EMFILE)"
        logger.warning(
            """
            \(scope): refused \(descriptorWarning.refused) new connections; \(transport.connectionCount) open \
            WebSocket connections keep being served, and accepting resumes as descriptors come free. Limit: \
            \(limit.description). Raise it (ulimit -n, systemd LimitNOFILE=, docker --ulimit nofile=\
            \(code == ENFILE ? ", sysctl fs.file-max" : "")) or spread clients over more servers; see docs/deploy.md
            """,
            metadata: ["soft": "\(limit.soft)", "hard": "\(limit.hard)", "refused": "\(descriptorWarning.refused)"])
        descriptorWarning = (now, 0)
    }
}
