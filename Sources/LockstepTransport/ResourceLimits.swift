#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Process-wide resource limits a server with thousands of sockets needs.
enum ResourceLimits {
    /// Raises the soft `RLIMIT_NOFILE` to the hard limit (best effort; failures leave the limit as it was).
    static func raiseFileDescriptorLimit() {
        var limit = rlimit()
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(resource, &limit)
    }
}
