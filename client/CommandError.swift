/// A line that is not a command, with what to type instead.
enum CommandError: Error, Equatable, CustomStringConvertible {
    case empty
    case usage(String)
    case unknown(String, app: AppKind)
    /// A command that reads from the server could not.
    case failed(String)

    var description: String {
        switch self {
        case .empty: "type a command (help lists them)"
        case .usage(let usage): "usage: \(usage)"
        case .unknown(let word, let app): "unknown command '\(word)' for the \(app.rawValue) app (help lists them)"
        case .failed(let reason): reason
        }
    }
}
