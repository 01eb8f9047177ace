import LockstepTransport

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

    /// `Access-Control-Allow-Origin` for a request from an allowed origin; none without an `Origin` or for one that
    /// is not allowed.
    func corsHeaders(for request: HTTPRequest) -> [String: String] {
        guard let origin = request.header("origin"), allowsOrigin(origin, host: request.header("host"))
        else { return [:] }
        return ["Access-Control-Allow-Origin": origin, "Vary": "Origin"]
    }
}
