import LockstepCore
import LockstepJSON

/// A request a simulated client sends, with its session's `seq`; `id` names it in the log's causes.
struct SimulatedRequest {
    enum Kind {
        case action(JSON)
        case undo, redo, undoMine, redoMine
        /// `revert` to a version the client has seen.
        case revert(to: Int)
        /// The action with `after` (in steps of the simulated clock) and `timer`: answered `scheduled`.
        case schedule(JSON, after: Int, timer: String)
        /// `cancel` of the room's timer of that name: answered `scheduled` with no `due`.
        case cancel(timer: String)
    }

    let id: String
    let seq: Int
    let kind: Kind

    /// The request as a client's message says it (a timer's action as an action).
    var message: ClientMessage {
        switch kind {
        case .action(let json), .schedule(let json, _, _): .action(id: id, action: json)
        case .undo: .undo(id: id)
        case .redo: .redo(id: id)
        case .undoMine: .undo(id: id, mine: true)
        case .redoMine: .redo(id: id, mine: true)
        case .cancel(let timer): .cancel(id: id, timer: timer)
        case .revert(let version): .revert(id: id, to: version)
        }
    }
}

/// What a simulated client sends on its connection.
enum ClientFrame {
    case request(SimulatedRequest)
    /// A read answered outside any write (as `history` is): its answer must still follow the writes before it.
    case read(id: String)
    /// The client's presence state: kept beside the room, never written to its log.
    case presence(JSON)
}

/// What a simulated server sends on a connection; patches are the exact bytes the log keeps.
enum ServerFrame {
    case snapshot(version: Int, state: JSON, undo: Int, redo: Int, seq: Int)
    case resume(version: Int, seq: Int)
    case patch([UInt8])
    /// `changed`: the request made a version (the checks look for it in the log).
    case ack(id: String, version: Int, duplicate: Bool, changed: Bool)
    case error(id: String?, code: String)
    case readReply(id: String, version: Int)
    case close
}
