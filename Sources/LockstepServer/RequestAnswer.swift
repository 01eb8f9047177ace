import LockstepCore
import LockstepJSON

/// The answer to one request, which its ``Requester`` puts in its own form: a frame on its connection, or an HTTP
/// response with the status the protocol gives the code.
enum RequestAnswer {
    /// What a client is told when its request cannot be committed now.
    static let unavailable = "the server cannot reach its database; nothing was applied, send it again later"

    /// The request is applied (or was before, `duplicate`); `version` is its change's, or the room's when it changed
    /// nothing.
    case ack(id: String?, version: Int, duplicate: Bool = false)
    case error(id: String?, code: String, message: String)
    /// An action is scheduled as timer `timer`, due at `due` (milliseconds since the Unix epoch); nil `due`: the timer
    /// is cancelled (or was not pending).
    case scheduled(id: String?, timer: String, due: Int?)
    /// Any other reply to a connection, such as `history`.
    case message(ServerMessage)

    /// As a WebSocket client receives it.
    var json: JSON {
        switch self {
        case .ack(let id, let version, let duplicate):
            guard duplicate, case .object(var ack) = ServerMessage.ack(id: id, version: version).json else {
                return ServerMessage.ack(id: id, version: version).json
            }
            ack["duplicate"] = true
            return .object(ack)
        case .error(let id, let code, let message):
            return ServerMessage.error(id: id, code: code, message: message).json
        case .scheduled(let id, let timer, let due):
            return ServerMessage.scheduled(id: id, timer: timer, due: due).json
        case .message(let message):
            return message.json
        }
    }

    /// Whether the request took effect (an ack, or a timer scheduled or cancelled): its `seq` is then applied.
    var applies: Bool {
        switch self {
        case .ack, .scheduled: true
        case .error, .message: false
        }
    }

    /// Whether the request failed for a reason outside it (the database), so it may be sent again as it is.
    var isUnavailable: Bool {
        if case .error(_, "unavailable", _) = self { return true }
        return false
    }
}
