/// Where an HTTP writer of `lockstep load --scenario http` posts: the room of a `ws://` URL, as `POST
/// /rooms/ROOM` on the same host and port.
struct LoadHTTPTarget: Sendable, Equatable {
    /// The host to resolve, without the brackets of an IPv6 literal.
    var host: String
    var port: Int
    /// The request target: the URL's path and query, e.g. `/rooms/bench?name=w`.
    var path: String
    /// The `Host` header's value, as the URL wrote it.
    var hostHeader: String

    /// The target of `url` (`ws://HOST[:PORT]/PATH`); nil for `wss://` or anything else.
    init?(url: String) {
        guard url.hasPrefix("ws://") else { return nil }
        let rest = url.dropFirst(5)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let target = rest.dropFirst(authority.count)
        path = target.hasPrefix("/") ? String(target) : "/" + target
        hostHeader = String(authority)
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { return nil }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = String(parts[0])
            if parts.count == 2 { portText = parts[1] }
        }
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else { return nil }
            port = value
        } else {
            port = 80
        }
        guard !host.isEmpty else { return nil }
    }
}
