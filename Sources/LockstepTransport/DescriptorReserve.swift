#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// One descriptor a server keeps open in reserve for the moment its process runs out of them.
///
/// When `accept` fails with `EMFILE` the connection stays queued on the listening socket, which stays readable: the
/// loop would wake at once, fail again, and spin while the client waits for nothing. Instead the server gives up the
/// spare, accepts and closes every waiting connection (each client sees its connection closed and can retry
/// elsewhere or later), and takes the spare back. Loop thread only.
final class DescriptorReserve {
    /// The listening sockets of the server's port.
    private let listeners: [Int32]
    private var spare: Int32

    /// Finds the listening sockets bound to `port` and opens the spare.
    init(port: Int) {
        listeners = ResourceLimits.openDescriptors().filter { Self.isListening($0, port: port) }
        spare = Self.openSpare()
    }

    deinit {
        if spare >= 0 { close(spare) }
    }

    /// After an `accept` failed for want of a descriptor: closes every connection waiting to be accepted, at most
    /// `limit`, and returns how many. Existing connections are untouched.
    func refuseWaiting(limit: Int = 4_096) -> Int {
        var refused = 0
        for listener in listeners {
            while refused < limit {
                var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 0) == 1 else { break }
                let accepted = accept(listener, nil, nil)
                if accepted >= 0 {
                    close(accepted)
                    refused += 1
                } else if (errno == EMFILE || errno == ENFILE) && spare >= 0 {
                    close(spare)
                    spare = -1
                } else if errno != EINTR {
                    break
                }
            }
        }
        if spare < 0 { spare = Self.openSpare() }
        return refused
    }

    private static func openSpare() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    /// Whether `descriptor` is a listening TCP socket bound to `port`.
    private static func isListening(_ descriptor: Int32, port: Int) -> Bool {
        var accepting: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0, accepting != 0 else {
            return false
        }
        var address = sockaddr_storage()
        var addressLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &addressLength) }
        }
        guard named == 0 else { return false }
        let networkPort: UInt16 =
            switch Int32(address.ss_family) {
            case AF_INET: withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
            }
            case AF_INET6: withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
            }
            default: 0
            }
        return Int(UInt16(bigEndian: networkPort)) == port
    }
}
