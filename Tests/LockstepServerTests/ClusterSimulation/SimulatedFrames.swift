import LockstepCore
import LockstepJSON
@testable import LockstepServer

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
    /// Its number in the session; 0 for a request with an idempotency key, which has none (as over HTTP).
    let seq: Int
    let kind: Kind
    /// An `Idempotency-Key`, as a backend sends over HTTP: applied at most once whatever server it is sent to again.
    var key: String?

    /// The key with what it is asked, as the server reads it.
    var idempotency: Idempotency? { key.flatMap { Idempotency(key: $0, body: message.json.serialized()) } }

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
    /// `unavailable` for a request whose write's commit went unanswered: it may be stored, and is sent again with
    /// its idempotency key, which tells.
    case maybeStored(id: String)
    case readReply(id: String, version: Int)
    case close
}

extension ServerFrame {
    /// An answer the room's engine gives `request`, as its client gets it: `changed` when the request made a version;
    /// a timer scheduled or cancelled is acknowledged at the room's `version`.
    init(_ answer: RequestAnswer, to request: SimulatedRequest, version: Int, changed: Bool = false) {
        switch answer {
        case .ack(_, let version, let duplicate):
            self = .ack(id: request.id, version: version, duplicate: duplicate, changed: changed)
        case .scheduled:
            self = .ack(id: request.id, version: version, duplicate: false, changed: false)
        case .error(_, let code, _):
            self = .error(id: request.id, code: code)
        case .message:
            preconditionFailure("a request is answered with an ack, a scheduled or an error")
        }
    }
}
