import LockstepCore
import LockstepJSON
import LockstepTransport

/// `POST /rooms/ROOM`: a request from a backend, a script or `curl`, applied in the room's one order like a client's
/// and answered once it is as durable as an ack; `OPTIONS` for browsers' preflights.
extension SyncServer {
    /// The methods `/rooms/ROOM` answers.
    static let roomMethods = "GET, HEAD, POST, OPTIONS"

    /// The answer to a request on `/rooms/ROOM` that is not a read: `POST`, a preflight, or `405`.
    func respond(to request: HTTPRequest, room name: String) -> HTTPResponse {
        let cors = corsHeaders(for: request)
        func refuse(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
            metrics.error(code)
            return HTTPRequester.response(
                to: .error(id: nil, code: code, message: message), room: name, status: status, headers: cors)
        }
        if let origin = request.header("origin"), cors.isEmpty {
            return refuse(403, "forbidden", ServerConfiguration.originRefusal(origin))
        }
        switch request.method {
        case "OPTIONS":
            return Self.preflight(cors, methods: "GET, POST", headers: "Authorization, Content-Type, Idempotency-Key")
        case "POST":
            break
        default:
            var response = refuse(405, "bad_message", "\(request.method) is not a method of /rooms/ROOM")
            response.headers["Allow"] = Self.roomMethods
            return response
        }
        guard !isDraining else { return refuse(503, "unavailable", Self.drainingNotice) }
        guard !request.bodyIsTooLarge else {
            return refuse(413, "too_large", "the body is over the \(configuration.maxFrameBytes)-byte limit")
        }
        guard Self.namesJSON(contentType: request.header("content-type")) else {
            return refuse(415, "bad_message", "the body must be one request as JSON, sent as application/json")
        }
        var grant: AccessGrant?
        if let tokens = configuration.tokens {
            do {
                let token = TokenAuthority.bearerToken(in: request.header("authorization"))
                grant = try tokens.authorize(token, room: name)
            } catch .otherRoom(let granted, let requested) {
                return refuse(403, "forbidden", "the token is for room '\(granted)', not '\(requested)'")
            } catch {
                var response = refuse(401, "unauthorized", error.message)
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
            }
            guard let grant, grant.role >= .write else { return refuse(403, "forbidden", "this token may only read") }
        }
        if let given = request.query["session"], SessionName(given) == nil {
            return refuse(
                400, "bad_message", "session must be 1 to \(SessionName.maxLength) characters of A-Z a-z 0-9 . _ -")
        }
        let from = RequestSender(
            name: request.query["name"].map { String($0.prefix(64)) }, subject: grant?.subject, role: grant?.role,
            session: request.query["session"])
        var idempotency: Idempotency?
        if let key = request.header("idempotency-key") {
            guard let valid = Idempotency(key: key, body: request.body) else {
                return refuse(
                    400, "bad_message",
                    "Idempotency-Key must be 1 to \(Idempotency.maxLength) visible ASCII characters")
            }
            idempotency = valid
        }
        let parsed: ClientRequest
        switch Self.changeRequest(in: request.body) {
        case .success(let request): parsed = request
        case .failure(let error): return refuse(error.status, error.code, error.message)
        }
        let promise = HTTPPromise()
        let submit = { (room: Room) in
            self.requestsWithoutConnection += 1
            let sender = HTTPRequester(
                room: room, from: from, idempotency: idempotency, number: self.requestsWithoutConnection, headers: cors,
                promise: promise)
            if let refusal = self.configuration.historyRefusal(of: parsed.message, role: from.role) {
                return promise.complete(with: refuse(403, "forbidden", refusal))
            }
            self.submit(parsed, from: sender)
            // A room read only for this request leaves memory again once idle.
            self.roomBecameIdle(room)
        }
        // A room in memory takes the request now, as a client's: no task, no wake of the loop, and an answer ready at
        // once (in memory) is written in this callback.
        if let room = rooms[name] {
            submit(room)
            return .deferred(promise)
        }
        Task {
            switch await self.room(named: name, creating: true) {
            case .success(let found?):
                // Read or made for this request: the room is no one's until a request of it succeeds.
                if found.store.version == 0, found.sessions.isEmpty { found.isProvisional = true }
                submit(found)
            case .success(nil):
                promise.complete(with: refuse(503, "unavailable", "the room cannot be read"))
            case .failure(let error):
                promise.complete(with: refuse(503, "unavailable", Self.loadFailure(name, error)))
            }
        }
        return .deferred(promise)
    }

    /// A method other than `GET` and `HEAD` on a room's paths that are only read (`/log`, `/timers`): the preflight a
    /// browser sends before reading one with a token or `Last-Event-ID`, or `405`.
    func respondToReadOnly(_ request: HTTPRequest) -> HTTPResponse {
        let cors = corsHeaders(for: request)
        if let origin = request.header("origin"), cors.isEmpty {
            return HTTPResponse(status: 403, text: ServerConfiguration.originRefusal(origin) + "\n")
        }
        guard request.method == "OPTIONS" else {
            let refusal = HTTPResponse(status: 405, text: "\(request.method) is not a method of \(request.path)\n")
            return refusal.adding(cors).adding(["Allow": "GET, HEAD, OPTIONS"])
        }
        return Self.preflight(cors, methods: "GET", headers: "Authorization, Last-Event-ID")
    }

    /// The answer to a browser's preflight from an allowed origin (`cors`): what the path takes.
    private static func preflight(_ cors: [String: String], methods: String, headers: String) -> HTTPResponse {
        var response = HTTPResponse(status: 204, headers: cors)
        response.headers["Access-Control-Allow-Methods"] = methods
        response.headers["Access-Control-Allow-Headers"] = headers
        return response
    }

    /// Whether a `Content-Type` is `application/json`, in any case, with spaces and parameters aside.
    static func namesJSON(contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }.lazy.filter { $0 != UInt8(ascii: " ") }
        return type.elementsEqual("application/json".utf8) { byte, wanted in
            ((65...90).contains(byte) ? byte | 32 : byte) == wanted
        }
    }

    /// A refusal of an HTTP request before it reaches the room: its status, code and words.
    struct HTTPRefusal: Error {
        let status: Int
        let code: String
        let message: String
    }

    /// The one change request a body holds: `action`, `undo`, `redo` or `revert`, without `seq`.
    static func changeRequest(in body: [UInt8]) -> Result<ClientRequest, HTTPRefusal> {
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

    /// `Access-Control-Allow-Origin` for a request from an allowed origin; none without an `Origin` or for one that
    /// is not allowed.
    func corsHeaders(for request: HTTPRequest) -> [String: String] {
        guard let origin = request.header("origin"), configuration.allowsOrigin(origin, host: request.header("host"))
        else { return [:] }
        return ["Access-Control-Allow-Origin": origin, "Vary": "Origin"]
    }
}
