import LockstepCore
import Logging
import LockstepTransport

/// Access control: who may join a room, and with which role.
extension SyncServer {
    /// Why a requester with `role` may not act on everyone's changes with `request` (global `undo`, `redo`, `revert`), or nil:
    /// below the history role they are refused, while `undo mine` and `redo mine` need only `write`.
    func historyRefusal(of request: ClientMessage, role: AccessRole?) -> String? {
        let needed = max(configuration.historyRole, configuration.app.historyRole == .admin ? .admin : .write)
        guard let role, role < needed else { return nil }
        switch request {
        case .undo(_, false), .redo(_, false), .revert:
            return "global undo, redo and revert take the \(needed.rawValue) role on this server; "
                + "undo mine and redo mine take back your own changes"
        default:
            return nil
        }
    }

    /// What `connection` may do in `room`, or nil after refusing it: one `unauthorized` error, then
    /// close 1008. Runs before the connection joins the room, so a refused client sees no state.
    func admit(_ connection: WebSocketConnection, to room: String) -> AccessGrant? {
        guard let tokens = configuration.tokens else { return AccessGrant(room: "*", role: .write) }
        let token = connection.query["token"] ?? TokenAuthority.bearerToken(in: connection.header("authorization"))
        do {
            return try tokens.authorize(token, room: room)
        } catch {
            metrics.error(error.code)
            logger.info(
                "refused a connection",
                metadata: [
                    "room": "\(room)", "peer": "\(connection.peerAddress)", "reason": "\(error.message)",
                ])
            let refusal = ServerMessage.error(id: nil, code: error.code, message: error.message)
            connection.send(OutboundFrame(text: refusal.serialized()))
            connection.close(code: 1008, reason: "unauthorized")
            return nil
        }
    }

    /// The refusal for an HTTP read of `room`, or nil when it may proceed: 401 without a valid
    /// `Authorization: Bearer` token, 403 for a token of another room.
    func refusal(for request: HTTPRequest, room: String) -> HTTPResponse? {
        guard let tokens = configuration.tokens else { return nil }
        do {
            _ = try tokens.authorize(TokenAuthority.bearerToken(in: request.header("authorization")), room: room)
            return nil
        } catch .otherRoom(let granted, let requested) {
            return HTTPResponse(
                status: 403, text: "forbidden: the token is for room '\(granted)', not '\(requested)'\n")
        } catch {
            var response = HTTPResponse(status: 401, text: "unauthorized: \(error.message)\n")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        }
    }
}
