extension ServerConfiguration {
    /// Whether a browser page at `origin` may connect: the server's own origin (`http://` and the `Host` the client
    /// addressed), or one listed in `allowedOrigins` (`*`: any). Scheme and host compare without regard to case.
    func allowsOrigin(_ origin: String, host: String?) -> Bool {
        let origin = origin.lowercased()
        if let host, origin == "http://" + host.lowercased() { return true }
        return allowedOrigins.contains { $0 == "*" || $0.lowercased() == origin }
    }

    /// Why a page at `origin` is refused, and what lets it in.
    static func originRefusal(_ origin: String) -> String {
        "origin \(origin) is not allowed: start the server with --allowed-origin \(origin)"
    }
}
