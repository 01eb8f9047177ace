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

    /// The refusal for an HTTP read of `room`, or nil when it may proceed (``bearerGrant(of:room:)``).
    func readRefusal(of request: HTTPRequest, room: String) -> HTTPResponse? {
        guard case .failure(let refusal) = bearerGrant(of: request, room: room) else { return nil }
        return refusal.textResponse
    }

    /// What the `Authorization: Bearer` token of `request` grants in `room` (nil on a server without tokens), or its
    /// refusal: 403 for a token of another room, else 401 with `WWW-Authenticate`.
    func bearerGrant(of request: HTTPRequest, room: String) -> Result<AccessGrant?, HTTPRefusal> {
        guard let tokens else { return .success(nil) }
        do {
            return .success(
                try tokens.authorize(TokenAuthority.bearerToken(in: request.header("authorization")), room: room))
        } catch .otherRoom(let granted, let requested) {
            return .failure(
                HTTPRefusal(
                    status: 403, code: "forbidden", message: "the token is for room '\(granted)', not '\(requested)'"))
        } catch {
            return .failure(
                HTTPRefusal(
                    status: 401, code: "unauthorized", message: error.message, headers: ["WWW-Authenticate": "Bearer"]))
        }
    }
}
