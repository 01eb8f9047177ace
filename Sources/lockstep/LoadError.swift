/// Why `lockstep load` could not run at all (as opposed to a run that measured failures, which exits 1).
enum LoadError: Error, CustomStringConvertible {
    case transport(String)
    case connect(String)

    var description: String {
        switch self {
        case .transport(let message): "load: \(message)"
        case .connect(let message):
            "load: \(message); is the server running, and is --clients within its --max-connections?"
        }
    }
}
