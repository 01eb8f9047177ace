extension Duration {
    /// Reads `500ms`, `30s`, `15m`, `1h`, `7d`, or a bare number of seconds; nil for anything else or a negative count.
    ///
    /// One spelling for every duration on the command line (`--ttl`, `--handshake-timeout`, `--room-idle`, ...).
    public init?(shorthand text: String) {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var digits = Substring(text)
        var scale: Int64 = 1
        let milliseconds = text.hasSuffix("ms")
        if milliseconds {
            digits = digits.dropLast(2)
        } else if let last = text.last, let unit = units[last] {
            digits = digits.dropLast()
            scale = unit
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let count = Int64(digits), count >= 0 else { return nil }
        guard !milliseconds else {
            self = .milliseconds(count)
            return
        }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: scale)
        guard !overflow else { return nil }
        self = .seconds(seconds)
    }
}
