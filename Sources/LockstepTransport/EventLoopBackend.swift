/// How a context's loop waits for its sockets: chosen once, when the server or client is made.
///
/// Each pass of `poll` hands every open descriptor to poll(2); each pass of `epoll` costs the descriptors that are
/// ready, but every socket that fills up or drains changes the kernel's interest set with a system call of its own.
/// So `poll` is the cheaper loop while most connections have something to write in most passes (a busy room's
/// fan-out), and `epoll` while most are idle (tens of thousands of connections, or changes that reach few of them).
public enum EventLoopBackend: String, Sendable, CaseIterable {
    /// libwebsockets' own loop on poll(2).
    case poll
    /// libwebsockets on a libev loop of its own: epoll(7) on Linux.
    case epoll

    /// `collectInterval` applies to `epoll` only: libwebsockets' own loop has no such setting.
    func makeDriver(collectInterval: Duration) -> any LoopDriver {
        switch self {
        case .poll: PollLoopDriver()
        case .epoll: LibevLoopDriver(collectInterval: collectInterval)
        }
    }
}
