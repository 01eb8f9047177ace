import Glibc

/// Binds a server's address once before libwebsockets does, so a port another process holds is a clear error rather
/// than libwebsockets' log lines and a failed context.
enum ListenProbe {
    /// Throws ``TransportError/addressInUse(host:port:)`` when another socket is bound to `host:port`. Every other
    /// failure (an unknown host, a privileged port) is left to libwebsockets, which reports it as it always has.
    static func check(host: String, port: Int) throws(TransportError) {
        guard port > 0 else { return }
        // The address libwebsockets binds: the IPv4 wildcard for these (IPv6 only when the host has a ':').
        let node = ["", "*", "0.0.0.0"].contains(host) ? "0.0.0.0" : host
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(node, String(port), &hints, &found) == 0, let address = found else { return }
        defer { freeaddrinfo(found) }
        let probe = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard probe >= 0 else { return }
        defer { close(probe) }
        // As libwebsockets does: a port whose last connections linger in TIME_WAIT is free.
        var on: Int32 = 1
        setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if bind(probe, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0, errno == EADDRINUSE {
            throw .addressInUse(host: host, port: port)
        }
    }
}
