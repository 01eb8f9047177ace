import LockstepCore
import LockstepJSON
import LockstepTransport

/// A `POST /rooms/ROOM` read with no server: the one change request its JSON body holds, who sends it (its token's
/// subject and role, `name=`, `session=`) and its `Idempotency-Key`; or why it is refused, with its status and the
/// protocol's code (the head's faults before the body's).
struct HTTPRoomPost {
    /// The methods `/rooms/ROOM` answers.
    static let roomMethods = "GET, HEAD, POST, OPTIONS"

    let request: ClientRequest
    let sender: RequestSender
    let idempotency: Idempotency?

    /// What `post` asks of `room`, or why it is refused: a body over the limit, not JSON, a token that may not write
    /// there, a bad `session=` or `Idempotency-Key`, or a body that is not one change request.
    static func read(
        _ post: HTTPRequest, room: String, configuration: ServerConfiguration
    ) -> Result<HTTPRoomPost, HTTPRefusal> {
        guard !post.bodyIsTooLarge else {
            return .failure(
                HTTPRefusal(
                    status: 413, code: "too_large",
                    message: "the body is over the \(configuration.maxFrameBytes)-byte limit"))
        }
        guard namesJSON(contentType: post.header("content-type")) else {
            return .failure(
                HTTPRefusal(
                    status: 415, code: "bad_message",
                    message: "the body must be one request as JSON, sent as application/json"))
        }
        let grant: AccessGrant?
        switch configuration.bearerGrant(of: post, room: room) {
        case .success(let granted): grant = granted
        case .failure(let refusal): return .failure(refusal)
        }
        if let grant, grant.role < .write {
            return .failure(HTTPRefusal(status: 403, code: "forbidden", message: "this token may only read"))
        }
        if let given = post.query["session"], SessionName(given) == nil {
            return .failure(
                HTTPRefusal(
                    status: 400, code: "bad_message",
                    message: "session must be 1 to \(SessionName.maxLength) characters of A-Z a-z 0-9 . _ -"))
        }
        let sender = RequestSender(
            name: post.query["name"].map { String($0.prefix(64)) }, subject: grant?.subject, role: grant?.role,
            session: post.query["session"])
        var idempotency: Idempotency?
        if let key = post.header("idempotency-key") {
            guard let valid = Idempotency(key: key, body: post.body) else {
                return .failure(
                    HTTPRefusal(
                        status: 400, code: "bad_message",
                        message: "Idempotency-Key must be 1 to \(Idempotency.maxLength) visible ASCII characters"))
            }
            idempotency = valid
        }
        return changeRequest(in: post.body).map {
            HTTPRoomPost(request: $0, sender: sender, idempotency: idempotency)
        }
    }

    /// Whether a `Content-Type` is `application/json`, in any case, with spaces and parameters aside.
    private static func namesJSON(contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }.lazy.filter { $0 != UInt8(ascii: " ") }
        return type.elementsEqual("application/json".utf8) { byte, wanted in
            ((65...90).contains(byte) ? byte | 32 : byte) == wanted
        }
    }

    /// The one change request a body holds: `action`, `undo`, `redo` or `revert`, without `seq`.
    private static func changeRequest(in body: [UInt8]) -> Result<ClientRequest, HTTPRefusal> {
        let json: JSON
        do {
            json = try JSON(parsing: body)
        } catch {
            return .failure(HTTPRefusal(status: 400, code: "bad_json", message: "\(error)"))
        }
        guard case .object = json else {
            return .failure(HTTPRefusal(status: 400, code: "bad_json", message: "the body must be a JSON object"))
        }
        let request: ClientRequest
        do {
            request = try ClientRequest(json: json)
        } catch {
            return .failure(
                HTTPRefusal(status: HTTPRequester.status(of: error.code), code: error.code, message: error.message))
        }
        switch request.message {
        case .action, .undo, .redo, .revert, .cancel:
            break
        default:
            return .failure(
                HTTPRefusal(
                    status: 400, code: "bad_message",
                    message: "over HTTP a request is an action, undo, redo, revert or cancel"))
        }
        guard json["seq"] == nil else {
            return .failure(
                HTTPRefusal(
                    status: 400, code: "bad_message",
                    message: "\"seq\" is for WebSocket sessions; over HTTP send an Idempotency-Key header"))
        }
        return .success(request)
    }
}
