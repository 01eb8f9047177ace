public import ArgumentParser
import LockstepServer

/// `30s`, `15m`, `1h`, `7d` or bare seconds on the command line.
extension Duration: @retroactive ExpressibleByArgument {
    public init?(argument: String) {
        self.init(shorthand: argument)
    }

    public var defaultValueDescription: String {
        let seconds = components.seconds
        if components.attoseconds != 0 { return "\(Int64((self / .milliseconds(1)).rounded()))ms" }
        for (unit, size) in [("d", Int64(86_400)), ("h", 3_600), ("m", 60)] where seconds >= size && seconds % size == 0
        {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }
}
