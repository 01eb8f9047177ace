internal import CLibWebSockets
import Glibc

/// Sockets one thread waits on (epoll), each under a tag of its owner's: a wait costs the sockets that are ready, not
/// every socket watched, as a `poll` over all of them would.
public final class SocketReadiness {
    private let descriptor: Int32
    private var ready: [epoll_event]

    /// A set that hands over up to `batch` ready sockets a wait (the others wait for the next).
    public init(batch: Int) throws(TransportError) {
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard descriptor >= 0 else {
            throw .contextCreationFailed("cannot make an epoll set: \(String(cString: strerror(errno)))")
        }
        ready = Array(repeating: epoll_event(), count: max(1, batch))
    }

    deinit {
        close(descriptor)
    }

    /// Watches `socket` for input, and for output too if `output`; `again` changes what a socket already watched
    /// waits for. Closing a socket ends its watch.
    public func watch(_ socket: Int32, tag: UInt32, output: Bool, again: Bool) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | (output ? EPOLLOUT.rawValue : 0)
        event.data.u32 = tag
        _ = epoll_ctl(descriptor, again ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, socket, &event)
    }

    /// Waits up to `milliseconds` for watched sockets to be ready, then calls `body` with each one's tag, whether it
    /// can be read (or has closed), and whether it can be written. Returns how many were ready.
    @discardableResult
    public func wait(milliseconds: Int32, _ body: (_ tag: UInt32, _ readable: Bool, _ writable: Bool) -> Void) -> Int {
        let count = Int(epoll_wait(descriptor, &ready, Int32(ready.count), milliseconds))
        for event in ready.prefix(max(0, count)) {
            body(event.data.u32, event.events & ~EPOLLOUT.rawValue != 0, event.events & EPOLLOUT.rawValue != 0)
        }
        return max(0, count)
    }
}
