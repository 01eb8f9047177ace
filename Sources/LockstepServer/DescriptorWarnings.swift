/// When a server out of file descriptors says so: at once the first time, then at most once per interval, each
/// time with every connection refused since it last spoke, so a flood of refusals is one line, not one per accept.
struct DescriptorWarnings {
    /// The shortest time between two warnings (`ServerConfiguration.descriptorWarningInterval`).
    let interval: Duration
    private var lastWarning: Duration?
    private var refusedSince = 0

    init(interval: Duration) {
        self.interval = interval
    }

    /// Notes `refused` connections refused at `now`; returns how many to report when a warning is due, else nil.
    mutating func refused(_ refused: Int, at now: Duration) -> Int? {
        refusedSince += max(refused, 1)
        if let lastWarning, now - lastWarning < interval { return nil }
        defer {
            lastWarning = now
            refusedSince = 0
        }
        return refusedSince
    }
}
