import ArgumentParser
import Logging

/// How `lockstep serve` writes its log to stderr, chosen once at start (`--log-format`).
enum LogFormat: String, CaseIterable, ExpressibleByArgument {
    /// swift-log's own lines, for a person at a terminal.
    case text
    /// One JSON object per line, for a log collector (journald, Loki, CloudWatch, ...).
    case json

    /// Routes every logger of the process to stderr in this format.
    func bootstrap() {
        switch self {
        case .text: LoggingSystem.bootstrap(StreamLogHandler.standardError)
        case .json: LoggingSystem.bootstrap(JSONLogHandler.init)
        }
    }
}
