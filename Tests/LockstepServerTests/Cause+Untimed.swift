import LockstepCore

extension Cause {
    /// The cause without its time, which no test can know ahead.
    var untimed: Cause {
        var cause = self
        cause.at = nil
        return cause
    }
}

extension ServerMessage {
    /// The message with its causes untimed.
    var untimed: ServerMessage {
        switch self {
        case .patch(let version, let ops, let cause, let undo, let redo):
            .patch(version: version, ops: ops, cause: cause.untimed, undo: undo, redo: redo)
        case .history(let id, let entries):
            .history(id: id, entries: entries.map { .init(version: $0.version, cause: $0.cause.untimed) })
        default:
            self
        }
    }
}
