import LockstepCore
import LockstepJSON
@testable import LockstepServer

/// The clients: they connect to any live server (resuming with `since=` what they hold), send requests with their
/// session's `seq`, send again what was not answered when they reconnect, and check every message they receive.
extension ClusterSimulation {
    func connect(_ client: SimulatedClient) {
        guard let server = servers.filter(\.alive).randomElement(using: &random) else { return }
        let since = chance(850) ? client.mirror?.version : nil
        let id = makeID()
        connections[id] = SimulatedConnection(
            id: id, client: client.index, server: server.index, incarnation: server.incarnation, room: client.room,
            since: since)
        client.connection = id
        client.joined = false
        client.outstanding = []
        note(
            "client \(client.index) connects to server \(server.index) as \(id), since \(since.map(String.init) ?? "-")"
        )
        tasks.append(.join(connection: id))
    }

    /// The client cuts its connection (or the network does).
    func disconnect(_ client: SimulatedClient) {
        guard let id = client.connection, let connection = connections[id] else { return }
        connection.cut()
        let server = servers[connection.server]
        if server.alive, server.incarnation == connection.incarnation, let room = server.rooms[connection.room],
            room.connections.contains(id)
        {
            leave(id, from: room)
            peersChanged(in: room, on: server)
        }
        client.lost()
    }

    /// Sends again, with their `seq`, the requests answered `unavailable` on this connection.
    func resendRefused(_ client: SimulatedClient) {
        for request in client.unacked where client.refused.contains(request.id) {
            note("client \(client.index) sends \(request.id) again")
            sendFrame(.request(request), from: client)
        }
        client.refused = []
    }

    /// A new request: an action of the app, an undo or redo (global or mine), a revert, a timer or its cancel.
    func act(_ client: SimulatedClient) {
        // Now and then a request as a backend sends it over HTTP: with an idempotency key, without a `seq`; mostly an
        // action, and an undo, a redo or a revert, whose answer the key keeps whatever the room does after it.
        if chance(150) {
            client.keyed += 1
            let kind: SimulatedRequest.Kind
            switch below(10) {
            case 0: kind = .undo
            case 1: kind = .redo
            case 2: kind = .revert(to: max(0, (client.mirror?.version ?? 0) - below(12)))
            default: kind = .action(appAction(for: client))
            }
            let id = "\(client.session).key\(client.keyed)"
            return send(SimulatedRequest(id: id, seq: 0, kind: kind, key: id), from: client)
        }
        let seq = client.nextSeq
        client.nextSeq += 1
        let kind: SimulatedRequest.Kind
        switch below(100) {
        case 0..<8: kind = .undo
        case 8..<12: kind = .redo
        case 12..<18: kind = .undoMine
        case 18..<21: kind = .redoMine
        case 21..<29: kind = .schedule(timerAction(), after: below(80), timer: "t\(below(3))")
        case 29..<32: kind = .cancel(timer: "t\(below(3))")
        case 32..<36: kind = .revert(to: max(0, (client.mirror?.version ?? 0) - below(12)))
        default: kind = .action(appAction(for: client))
        }
        send(SimulatedRequest(id: "\(client.session).\(seq)", seq: seq, kind: kind), from: client)
    }

    private func send(_ request: SimulatedRequest, from client: SimulatedClient) {
        note("client \(client.index) sends \(request.id) \(request.kind)\(request.key == nil ? "" : " with its key")")
        client.unacked.append(request)
        sendFrame(.request(request), from: client)
    }

    func read(_ client: SimulatedClient) {
        client.reads += 1
        let id = "\(client.session).read\(client.reads)"
        note("client \(client.index) reads (\(id))")
        sendFrame(.read(id: id), from: client)
    }

    func sendFrame(_ frame: ClientFrame, from client: SimulatedClient) {
        guard let id = client.connection, let connection = connections[id], connection.open else { return }
        switch frame {
        case .request(let request): client.outstanding.append(.init(id: request.id, after: client.ackedVersion))
        case .read(let readID): client.outstanding.append(.init(id: readID, after: client.ackedVersion))
        case .presence: break
        }
        connection.toServer.append(frame)
        tasks.append(.toServer(connection: id))
    }

    private func appAction(for client: SimulatedClient) -> JSON {
        if app.name == HandsDocument.app.name { return handsAction(for: client) }
        if app.name == "counter" {
            switch below(4) {
            case 0: return ["type": "increment"]
            case 1: return ["type": "decrement"]
            case 2: return ["type": "add", "amount": .int(1 + below(9))]
            default: return ["type": "reset"]
            }
        }
        let ids = client.mirror?.state["items"]?.arrayValue?.compactMap { $0["id"]?.intValue } ?? []
        let id = ids.isEmpty || chance(100) ? 1 + below(20) : ids[below(ids.count)]
        switch below(6) {
        case 0, 1: return ["type": "add", "title": .string("t\(below(1000))")]
        case 2: return ["type": "toggle", "id": .int(id)]
        case 3: return ["type": "rename", "id": .int(id), "title": .string("r\(below(1000))")]
        case 4: return ["type": "remove", "id": .int(id)]
        default: return ["type": "clearCompleted"]
        }
    }

    /// A patch of the hands app: writes to the board, to a hand (mostly the sender's own) with its owner's mark, to
    /// the vault, a hand replaced whole, moves and copies that keep each mark in its owner's part, and two writes in
    /// one patch, one public and one private. A board's value may be copied into a hand, or moved out of sight into
    /// the one key of a hand that never holds a mark (`moved`): undone, a move takes back whatever its target then
    /// holds, and a mark moved to the board that way would be the app's doing, not a leak.
    private func handsAction(for client: SimulatedClient) -> JSON {
        let subjects = HandsDocument.subjects
        let owner = client.sight.reader.flatMap { chance(700) ? $0 : nil } ?? subjects[below(subjects.count)]
        let hand = "/hands/\(owner)"
        let number = below(1000)
        func at(_ part: String) -> JSON { .string("\(part)/k\(below(4))") }
        let onBoard: JSON = ["op": "add", "path": at("/board"), "value": .string("pub-\(number)")]
        let inHand: JSON = ["op": "add", "path": at(hand), "value": .string("secret-\(owner)-\(number)")]
        let ops: [JSON]
        switch below(10) {
        case 0, 1: ops = [onBoard]
        case 2, 3: ops = [inHand]
        case 4: ops = [["op": "remove", "path": at(chance(500) ? "/board" : hand)]]
        case 5:
            let part = chance(500) ? "/board" : hand
            ops = [["op": "move", "from": at(part), "path": at(part)]]
        case 6 where chance(500):
            ops = [["op": "copy", "from": at("/board"), "path": at(chance(500) ? "/board" : hand)]]
        case 6: ops = [["op": "move", "from": at("/board"), "path": .string("\(hand)/moved")]]
        case 7: ops = [["op": "add", "path": at("/vault"), "value": .string("vault-\(number)")]]
        case 8: ops = [["op": "add", "path": .string(hand), "value": ["k0": .string("secret-\(owner)-\(number)")]]]
        default: ops = [onBoard, inHand]
        }
        return ["type": "patch", "ops": .array(ops)]
    }

    /// A timer's action: one the app never rejects, so every timer that fires makes exactly one change.
    private func timerAction() -> JSON {
        switch app.name {
        case "counter": ["type": "add", "amount": .int(1 + below(9))]
        case HandsDocument.app.name:
            ["type": "patch", "ops": [["op": "add", "path": "/board/timer", "value": .string("pub-\(below(1000))")]]]
        default: ["type": "add", "title": .string("timer\(below(1000))")]
        }
    }

    // MARK: - Receiving

    func deliverToClient(_ id: Int) {
        guard let connection = connections[id], connection.open, !connection.toClient.isEmpty else { return }
        let frame = connection.toClient.removeFirst()
        let client = clients[connection.client]
        guard client.connection == id else { return }
        let name = client.room
        let logVersion = log.version(of: name)
        switch frame {
        case .snapshot(let version, let state, let undo, let redo, let seq):
            note("client \(client.index) gets a snapshot at \(version), seq \(seq)")
            if version < client.ackedVersion {
                violate("client \(client.index) got a snapshot at \(version), behind its ack of \(client.ackedVersion)")
            }
            if let mirror = client.mirror, let since = connection.since, since == mirror.version, version < since {
                violate("client \(client.index) resumed from \(since) and got an older snapshot at \(version)")
            }
            checkPrivacy(of: state.serialized(), to: client)
            client.mirror = .init(state: state, version: version, undo: undo, redo: redo)
            joined(client, seq: seq)
        case .resume(let version, let seq):
            note("client \(client.index) resumes at \(version), seq \(seq)")
            if version != client.mirror?.version || version != connection.since {
                violate("client \(client.index) at \(client.mirror?.version ?? -1) got a resume at \(version)")
            }
            joined(client, seq: seq)
        case .patch(let bytes):
            checkPrivacy(of: bytes, to: client)
            guard
                case .patch(let version, let ops, _, let undo, let redo)? = try? ServerMessage(
                    json: JSON(parsing: bytes)), var mirror = client.mirror
            else { return violate("client \(client.index) got a patch it cannot read, or before any state") }
            // A view's client gets the versions that changed its view, and every one of them.
            let skipped = client.view == nil ? [] : Array(mirror.version + 1..<max(mirror.version + 1, version))
            if let missed = skipped.first(where: { seen(by: client, at: $0) != mirror.state }) {
                return violate(
                    "client \(client.index) at \(mirror.version) got version \(version): \(missed) changed its view")
            }
            guard version == mirror.version + 1 + skipped.count else {
                return violate("client \(client.index) at \(mirror.version) got the patch of version \(version): a gap")
            }
            do {
                _ = try ops.apply(to: &mirror.state)
            } catch {
                return violate("the patch of version \(version) does not apply to client \(client.index)'s mirror")
            }
            mirror.version = version
            mirror.undo = undo
            mirror.redo = redo
            client.mirror = mirror
        case .ack(let requestID, let version, let duplicate, let changed):
            note("client \(client.index) gets the ack of \(requestID) at \(version)\(duplicate ? ", duplicate" : "")")
            answered(client, requestID)
            guard let index = client.unacked.firstIndex(where: { $0.id == requestID }) else {
                return violate("client \(client.index) got an ack for \(requestID), which it does not wait for")
            }
            let request = client.unacked.remove(at: index)
            if case .schedule = request.kind, !duplicate, log.rooms[name]!.timerFates[requestID] == nil {
                violate("\(requestID) was answered scheduled, and the log never stored its timer")
            }
            if version > logVersion {
                violate("\(requestID) was acknowledged at \(version), and the log holds only \(logVersion)")
            }
            // A duplicate is one that a committed write applied: its seq or key says so only then.
            if duplicate, !log.rooms[name]!.committedRequests.contains(requestID) {
                violate("\(requestID) was acknowledged as a duplicate, and no committed write applied it")
            }
            let stored = log.rooms[name]!.versionOf[requestID]
            if changed, stored != version {
                violate(
                    "\(requestID) was acknowledged at \(version), and the log has it at \(stored.map(String.init) ?? "no version")"
                )
            }
            if changed, client.view == nil, (client.mirror?.version ?? 0) < version {
                violate("client \(client.index) got the ack of \(requestID) before the patch of version \(version)")
            }
            client.ackedSeq = max(client.ackedSeq, request.seq)
            client.ackedVersion = max(client.ackedVersion, version)
        case .error(let requestID, let code):
            guard let requestID else { return note("client \(client.index) is told \(code)") }
            note("client \(client.index) gets \(code) for \(requestID)")
            answered(client, requestID)
            // The same request may have been applied through an earlier connection, or by an earlier attempt its
            // sender was told may be stored; never by this one.
            if let stored = log.rooms[name]!.versionOf[requestID], log.rooms[name]!.senderOf[requestID] == "c\(id)",
                !client.mayBeStored.contains(requestID)
            {
                violate("\(requestID) was answered \(code), and the log has it at version \(stored)")
            }
            // Not applied this time: as `RoomClient` does, the client sends it again with its `seq` (a copy an earlier
            // connection sent may have been applied elsewhere, and the mark then says so); any other refusal ends it.
            if code == "unavailable" {
                client.refused.append(requestID)
            } else {
                client.unacked.removeAll { $0.id == requestID }
            }
        case .maybeStored(let requestID):
            note("client \(client.index) is told \(requestID) may be stored")
            answered(client, requestID)
            // As a backend does with a 503: the same request with the same key, which answers it if it was stored.
            client.mayBeStored.insert(requestID)
            client.refused.append(requestID)
        case .readReply(let readID, let version):
            let after = client.outstanding.first(where: { $0.id == readID })?.after ?? 0
            answered(client, readID)
            if version < after {
                violate(
                    "client \(client.index)'s read \(readID) saw version \(version), older than its ack of \(after)")
            }
        case .close:
            note("client \(client.index)'s connection is closed by the server")
            disconnect(client)
        }
    }

    /// The room's state at `version` as `client` sees it.
    func seen(by client: SimulatedClient, at version: Int) -> JSON? {
        let states = log.rooms[client.room]!.states
        guard version < states.count else { return nil }
        return client.sight.value(in: states[version], parts: app.privateParts)
    }

    /// No frame carries to a client what the room's private parts hide from it: the marks of another's hand or of the
    /// vault, in a state, an operation or a cause's action.
    private func checkPrivacy(of bytes: [UInt8], to client: SimulatedClient) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard !app.privateParts.isEmpty, let leaked = HandsDocument.leak(in: text, to: client.sight.reader) else {
            return
        }
        let reader = client.sight.reader ?? "no one"
        violate("client \(client.index), reading as \(reader), got \(leaked)… of a private part: \(text.prefix(400))")
    }

    /// Answers come in the order of their requests on a connection.
    private func answered(_ client: SimulatedClient, _ id: String) {
        guard let first = client.outstanding.first else {
            return violate("client \(client.index) got an answer to \(id), which it did not send on this connection")
        }
        if first.id != id {
            violate("client \(client.index) got the answer to \(id) before the answer to \(first.id)")
        }
        client.outstanding.removeAll { $0.id == id }
    }

    /// Joined: the requests the session's stored mark covers were applied; the others are sent again, in order.
    private func joined(_ client: SimulatedClient, seq: Int) {
        // Below what was acknowledged only to stay below a hole: a seq answered `unavailable` before one applied (a
        // hole the log had when the server read the mark, maybe filled since).
        let holes = log.rooms[client.room]!.everHoles[client.session] ?? []
        if seq < client.ackedSeq, !holes.contains(seq + 1) {
            violate("client \(client.index) joined with seq \(seq), behind its acknowledged seq \(client.ackedSeq)")
        }
        client.joined = true
        let committed = log.rooms[client.room]!.committedRequests
        // A request with an idempotency key is not under the session's mark: it goes out again, and its key answers.
        let covered = { (request: SimulatedRequest) in request.key == nil && request.seq <= seq }
        for request in client.unacked where covered(request) && !committed.contains(request.id) {
            violate(
                "client \(client.index)'s \(request.id) is under its session's mark \(seq), and no write applied it: lost"
            )
        }
        client.unacked.removeAll(where: covered)
        for request in client.unacked { sendFrame(.request(request), from: client) }
    }
}

extension SimulatedClient {
    /// Its connection is gone; what it holds and has sent stays.
    func lost() {
        connection = nil
        joined = false
        outstanding = []
        // The next connection sends every unacked request again.
        refused = []
    }
}
