/// The parts of a `ws://` or `wss://host[:port][/path][?query]` URL libwebsockets needs to connect.
struct WebSocketURL {
    /// `wss://`: the connection runs over TLS.
    let isSecure: Bool
    let host: String
    let port: Int
    /// Path plus query, as sent in the request line.
    let path: String

    init(_ text: String) throws(TransportError) {
        if text.hasPrefix("ws://") {
            isSecure = false
        } else if text.hasPrefix("wss://") {
            isSecure = true
        } else {
            throw .invalidURL(text)
        }
        let rest = text.dropFirst(isSecure ? 6 : 5)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var remainder = String(rest[authorityEnd...])
        if remainder.isEmpty { remainder = "/" } else if remainder.hasPrefix("?") { remainder = "/" + remainder }
        var hostPart = Substring(authority)
        var portNumber = isSecure ? 443 : 80
        if hostPart.hasPrefix("[") {
            guard let close = hostPart.firstIndex(of: "]") else { throw .invalidURL(text) }
            let after = hostPart[hostPart.index(after: close)...]
            hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()) else { throw .invalidURL(text) }
                portNumber = value
            }
        } else if let colon = hostPart.lastIndex(of: ":") {
            guard let value = Int(hostPart[hostPart.index(after: colon)...]) else { throw .invalidURL(text) }
            portNumber = value
            hostPart = hostPart[..<colon]
        }
        guard !hostPart.isEmpty, (1...65535).contains(portNumber) else { throw .invalidURL(text) }
        host = String(hostPart)
        port = portNumber
        path = remainder
    }

    /// The `Host` header: the port is left out when it is the scheme's own.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
    }
}
