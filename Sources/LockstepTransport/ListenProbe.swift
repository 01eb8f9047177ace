import Glibc

/// Binds a server's address once before libwebsockets does, so a port another process holds is a clear error rather
/// than libwebsockets' log lines and a failed context.
enum ListenProbe {
    /// Throws ``TransportError/addressInUse(host:port:)`` when another socket is bound to `host:port`, and
    /// ``TransportError/cannotListen(host:port:reason:)`` when it cannot be bound for another reason (a host that is
    /// not this machine's, a privileged port). A probe that cannot even make a socket leaves it to libwebsockets.
    static func check(host: String, port: Int) throws(TransportError) {
        // The address libwebsockets binds: the IPv4 wildcard for these (IPv6 only when the host has a ':').
        let node = ["", "*", "0.0.0.0"].contains(host) ? "0.0.0.0" : host
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = host.contains(":") ? AF_INET6 : AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(node, String(port), &hints, &found)
        guard lookup == 0, let address = found else {
            throw .cannotListen(host: host, port: port, reason: String(cString: gai_strerror(lookup)))
        }
        defer { freeaddrinfo(found) }
        let probe = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard probe >= 0 else { return }
        defer { close(probe) }
        // As libwebsockets does: a port whose last connections linger in TIME_WAIT is free.
        var on: Int32 = 1
        setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        guard bind(probe, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 else { return }
        let failure = errno
        guard failure != EADDRINUSE else { throw .addressInUse(host: host, port: port) }
        throw .cannotListen(host: host, port: port, reason: String(cString: strerror(failure)))
    }
}
