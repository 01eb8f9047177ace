import LockstepCore
import LockstepTransport

/// Access control as the configuration decides it: the role global undo, redo and revert take, and the HTTP reads a
/// token allows.
extension ServerConfiguration {
    /// Why a requester with `role` may not act on everyone's changes with `request` (global `undo`, `redo`,
    /// `revert`), or nil: below the history role they are refused, while `undo mine` and `redo mine` need only `write`.
    func historyRefusal(of request: ClientMessage, role: AccessRole?) -> String? {
        let needed = max(historyRole, app.historyRole == .admin ? .admin : .write)
        guard let role, role < needed else { return nil }
        switch request {
        case .undo(_, false), .redo(_, false), .revert:
            return "global undo, redo and revert take the \(needed.rawValue) role on this server; "
                + "undo mine and redo mine take back your own changes"
        default:
            return nil
        }
    }

    /// The refusal for an HTTP read of `room`, or nil when it may proceed: 401 without a valid
    /// `Authorization: Bearer` token, 403 for a token of another room.
    func readRefusal(of request: HTTPRequest, room: String) -> HTTPResponse? {
        guard let tokens else { return nil }
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
