import Glibc

/// A loopback port held by a socket that is bound but does not listen: connecting to it is refused, and nothing else
/// takes the port until ``release()`` frees it (for a server a test starts on it later).
public final class ReservedPort: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() throws(ReservedPortError) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ReservedPortError(step: "socket", reason: String(cString: strerror(errno))) }
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ReservedPortError(step: "bind", reason: reason)
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Frees the port.
    public func release() { close(descriptor) }
}

/// Why no port could be reserved.
public struct ReservedPortError: Error, CustomStringConvertible {
    public let step: String
    public let reason: String
    public var description: String { "\(step): \(reason)" }
}
