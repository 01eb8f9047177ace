extension ServerConfiguration {
    /// Whether `host` reaches this machine only: `localhost`, `127.0.0.0/8`, `::1` or the `lo` interface.
    /// All-interfaces addresses (`0.0.0.0`, `::`, `*`, empty) and every other name are not.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if ["localhost", "::1", "lo"].contains(bare.lowercased()) { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// Whether this configuration lets anyone who can reach it read and write every room from another machine.
    public var isOpenToTheNetwork: Bool {
        tokens == nil && !Self.isLoopback(host)
    }
}
