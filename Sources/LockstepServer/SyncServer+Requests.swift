import LockstepCore
import LockstepJSON
import LockstepTransport

/// `POST /rooms/ROOM`: a request from a backend, a script or `curl`, applied in the room's one order like a client's
/// and answered once it is as durable as an ack; `OPTIONS` for browsers' preflights.
extension SyncServer {
    /// The answer to a request on `/rooms/ROOM` that is not a read: `POST`, a preflight, or `405`.
    func respond(to request: HTTPRequest, room name: String) -> HTTPResponse {
        let cors = configuration.corsHeaders(for: request)
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
            return .preflight(cors, methods: "GET, POST", headers: "Authorization, Content-Type, Idempotency-Key")
        case "POST":
            break
        default:
            var response = refuse(405, "bad_message", "\(request.method) is not a method of /rooms/ROOM")
            response.headers["Allow"] = HTTPRoomPost.roomMethods
            return response
        }
        guard !isDraining else { return refuse(503, "unavailable", Self.drainingNotice) }
        let post: HTTPRoomPost
        switch HTTPRoomPost.read(request, room: name, configuration: configuration) {
        case .success(let read): post = read
        case .failure(let refusal): return refuse(refusal.status, refusal.code, refusal.message).adding(refusal.headers)
        }
        let promise = HTTPPromise()
        let submit = { (room: Room) in
            self.requestsWithoutConnection += 1
            let sender = HTTPRequester(
                room: room, from: post.sender, idempotency: post.idempotency, number: self.requestsWithoutConnection,
                headers: cors, promise: promise)
            if let refusal = self.configuration.historyRefusal(of: post.request.message, role: post.sender.role) {
                return promise.complete(with: refuse(403, "forbidden", refusal))
            }
            self.submit(post.request, from: sender)
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
                if found.engine.store.version == 0, found.sessions.isEmpty { found.isProvisional = true }
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
        let cors = configuration.corsHeaders(for: request)
        if let origin = request.header("origin"), cors.isEmpty {
            return HTTPResponse(status: 403, text: ServerConfiguration.originRefusal(origin) + "\n")
        }
        guard request.method == "OPTIONS" else {
            let refusal = HTTPResponse(status: 405, text: "\(request.method) is not a method of \(request.path)\n")
            return refusal.adding(cors).adding(["Allow": "GET, HEAD, OPTIONS"])
        }
        return .preflight(cors, methods: "GET", headers: "Authorization, Last-Event-ID")
    }
}
