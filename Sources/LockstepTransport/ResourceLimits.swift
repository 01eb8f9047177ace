internal import CLibWebSockets
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Process-wide resource limits a server with thousands of sockets needs.
public enum ResourceLimits {
    /// Raises the soft `RLIMIT_NOFILE` to the hard limit (best effort; a failure leaves the limit as it was) and
    /// returns the soft limit found, the soft limit now and the hard limit. Infinite limits read as `Int.max`.
    @discardableResult
    static func raiseFileDescriptorLimit() -> (before: Int, soft: Int, hard: Int) {
        var limit = rlimit()
        #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return (0, 0, 0) }
        let before = Int(clamping: limit.rlim_cur)
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return (before, Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
    }

    /// The descriptors open in this process, read from `/proc/self/fd` (empty where there is no such directory).
    static func openDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let own = dirfd(directory)
        var descriptors: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if let descriptor = Int32(name), descriptor != own { descriptors.append(descriptor) }
        }
        return descriptors
    }

    /// Hands memory the allocator holds free back to the system (glibc keeps freed pages for reuse, so a process that
    /// let go of much memory would otherwise keep its size). Costs a walk of the free lists: call it after releasing
    /// a lot, not per allocation.
    public static func returnFreeMemory() {
        CLibWebSockets_return_free_memory()
    }
}
