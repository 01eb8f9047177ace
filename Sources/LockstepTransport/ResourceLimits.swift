internal import CLibWebSockets
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Process-wide resource limits a server with thousands of sockets needs.
public enum ResourceLimits {
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

    /// Hands memory the allocator holds free back to the system (glibc keeps freed pages for reuse, so a process that
    /// let go of much memory would otherwise keep its size). Costs a walk of the free lists: call it after releasing
    /// a lot, not per allocation.
    public static func returnFreeMemory() {
        CLibWebSockets_return_free_memory()
    }
}
