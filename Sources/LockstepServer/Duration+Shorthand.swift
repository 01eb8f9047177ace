extension Duration {
    /// Reads `30s`, `15m`, `1h`, `7d`, or a bare number of seconds; nil for anything else or a negative count.
    ///
    /// One spelling for the command line's `--ttl` and `--handshake-timeout`.
    public init?(shorthand text: String) {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var digits = Substring(text)
        var scale: Int64 = 1
        if let last = text.last, let unit = units[last] {
            digits = digits.dropLast()
            scale = unit
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let count = Int64(digits), count >= 0 else { return nil }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: scale)
        guard !overflow else { return nil }
        self = .seconds(seconds)
    }
}
