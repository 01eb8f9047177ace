import LockstepCore
import LockstepJSON
import LockstepTransport

/// A request sent with `POST /rooms/ROOM`: applied in the room's order like a client's, and answered with an HTTP
/// response once it is as durable as an ack.
///
/// Without `session=` each request is its own author (its `undo mine` finds nothing); with it, the request is that
/// session's, as its subject owns it. Loop-bound.
final class HTTPRequester: RequesterWithoutConnection {
    let room: Room
    var client: String { "http" }
    let from: RequestSender
    let idempotency: Idempotency?
    /// Makes a request without a session its own author.
    private let number: Int
    /// Headers every answer carries (CORS).
    private let headers: [String: String]
    private let promise: HTTPPromise

    init(
        room: Room, from: RequestSender, idempotency: Idempotency?, number: Int, headers: [String: String],
        promise: HTTPPromise
    ) {
        self.room = room
        self.from = from
        self.idempotency = idempotency
        self.number = number
        self.headers = headers
        self.promise = promise
    }

    func sender(run: String) -> Sender {
        from.sender(client: client, connection: "\(run)/http-\(number)")
    }

    func answer(_ answer: RequestAnswer) {
        // A request that succeeded makes its room one someone has used.
        switch answer {
        case .error: break
        case .ack, .scheduled, .message: room.isProvisional = false
        }
        promise.complete(with: Self.response(to: answer, room: room.name, headers: headers))
    }

    /// The HTTP form of an answer: `200` with the room and version, or the status of the error's code with
    /// `{"code","message"}`.
    static func response(
        to answer: RequestAnswer, room: String, status given: Int? = nil, headers: [String: String] = [:]
    ) -> HTTPResponse {
        let status: Int
        let body: JSON
        switch answer {
        case .ack(_, let version, let duplicate):
            status = 200
            var object: JSONObject = ["room": .string(room), "version": .int(version)]
            if duplicate { object["duplicate"] = true }
            body = .object(object)
        case .error(_, let code, let message):
            status = given ?? Self.status(of: code)
            body = ["code": .string(code), "message": .string(message)]
        case .scheduled(_, let timer, let due):
            status = 202
            body = ["room": .string(room), "timer": .string(timer), "due": due.map(JSON.int) ?? .null]
        case .message(let message):
            status = 200
            body = message.json
        }
        return HTTPResponse(status: status, contentType: "application/json", body: body.serialized() + [10])
            .adding(headers)
    }

    /// The HTTP status of an error code, as the protocol lists them.
    static func status(of code: String) -> Int {
        switch code {
        case "unauthorized": 401
        case "forbidden": 403
        case "conflict", "nothing_to_undo", "nothing_to_redo", "unknown_version": 409
        case "too_large": 413
        case "invalid_action", "rejected", "idempotency_mismatch": 422
        case "unavailable": 503
        default: 400
        }
    }
}

@available(*, unavailable)
extension HTTPRequester: Sendable {}
