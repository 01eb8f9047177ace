/// Why `lockstep load` could not run at all (as opposed to a run that measured failures, which exits 1).
enum LoadError: Error, CustomStringConvertible {
    case transport(String)
    case connect(String)
    /// The setup actions of views or private parts (`--paths`, `--private-part`) were refused or unanswered.
    case setup(String)

    var description: String {
        switch self {
        case .transport(let message): "load: \(message)"
        case .connect(let message):
            "load: \(message); is the server running, and is --clients within its --max-connections?"
        case .setup(let message):
            "load: setting up the room failed: \(message); is the server's --app json, on a fresh room, and "
                + "does its --private pattern match --private-part?"
        }
    }
}
