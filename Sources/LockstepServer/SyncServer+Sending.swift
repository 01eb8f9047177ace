public import LockstepCore
public import LockstepJSON

/// Rooms from Swift, for an app that embeds the server: send a request as someone and await its version, or read a
/// room's state.
extension SyncServer {
    /// Applies `request` (an action, undo, redo or revert) in `room`'s one order, as `sender`, and returns its
    /// change's version (the room's current one when nothing changed) once it is as durable as an ack. The room is read
    /// or created as a client joining it would.
    ///
    /// ```swift
    /// let version = try await server.send(.action(id: nil, action: ["type": "increment"]), to: "demo",
    ///                                     from: RequestSender(name: "billing"))
    /// ```
    ///
    /// - Parameters:
    ///   - request: What to apply; `history` and `presence` are not change requests (`bad_message`).
    ///   - room: The room's name.
    ///   - sender: Who the change is from, in its cause and the reducer's context; its session makes it that
    ///     session's for `undo mine`.
    /// - Throws: ``RoomRequestError`` with the code a WebSocket client would get.
    public func send(
        _ request: ClientMessage, to room: String, from sender: RequestSender = RequestSender()
    ) async throws(RoomRequestError) -> Int {
        switch request {
        case .action, .undo, .redo, .revert: break
        default:
            throw RoomRequestError(code: "bad_message", message: "only an action, undo, redo or revert changes a room")
        }
        let found = try await loadedRoom(room)
        if let refusal = configuration.historyRefusal(of: request, role: sender.role) {
            throw RoomRequestError(code: "forbidden", message: refusal)
        }
        requestsWithoutConnection += 1
        let number = requestsWithoutConnection
        let answer = await withCheckedContinuation { continuation in
            let requester = AwaitedRequester(room: found, from: sender, number: number, continuation: continuation)
            submit(ClientRequest(message: request), from: requester)
        }
        roomBecameIdle(found)
        switch answer {
        case .ack(_, let version, _): return version
        case .error(_, let code, let message): throw RoomRequestError(code: code, message: message)
        case .message, .scheduled: throw RoomRequestError(code: "bad_message", message: "the request got no ack")
        }
    }

    /// `room`'s state and version as every client has them now (after what other servers of a cluster committed, and
    /// without changes still being stored).
    ///
    /// - Parameter room: The room's name.
    /// - Throws: ``RoomRequestError`` `not_found` for a room that was never created, `unavailable` when storage cannot
    ///   be read.
    public func state(of room: String) async throws(RoomRequestError) -> (version: Int, state: JSON) {
        let found = try await loadedRoom(room, creating: false)
        guard await pipeline.prepareJoin(of: found, session: nil, server: self) else {
            throw RoomRequestError(code: "unavailable", message: "the database did not answer in time")
        }
        defer { roomBecameIdle(found) }
        do {
            return try found.engine.releasedState()
        } catch {
            throw RoomRequestError(code: "unavailable", message: "\(error)")
        }
    }

    func loadedRoom(_ name: String, creating: Bool = true) async throws(RoomRequestError) -> Room {
        guard RoomName(name) != nil else { throw RoomRequestError(code: "bad_message", message: RoomName.rule) }
        switch await room(named: name, creating: creating) {
        case .success(let room?): return room
        case .success(nil): throw RoomRequestError(code: "not_found", message: "no room named \(name)")
        case .failure(let error): throw RoomRequestError(code: "unavailable", message: Self.loadFailure(name, error))
        }
    }
}
