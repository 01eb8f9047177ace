import Foundation
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Sessions: a client that names one (`session=`) numbers its change requests (`seq`), and the room remembers the
/// highest number it acknowledged, so a request sent again after a reconnection is answered, not applied twice.
extension SyncServer {
    /// True when `request` is to be applied; false when it was answered here: a `seq` applied before gets an ack
    /// with `"duplicate":true`, an idempotency key used before the first answer again (or `idempotency_mismatch`), a
    /// `seq` without a session `bad_message`.
    func isNew(_ request: ClientRequest, from requester: any Requester) -> Bool {
        let room = requester.room
        guard
            let answer = RoomTurn.answerInstead(
                of: request, session: requester.sessionName?.value, idempotency: requester.idempotency,
                marks: room.marks, version: room.store.version)
        else { return true }
        reply(answer, to: requester)
        return false
    }

    /// Answers a request in its turn. An ack first moves the session's mark up to the request's `seq`, and a request
    /// with an idempotency key keeps its answer in the key's mark (unless it was `unavailable`, which may be sent
    /// again): in memory at once, and in the log in the same write as the change, so the answer, sent after that
    /// write, covers both.
    func finish(seq: Int?, with answer: RequestAnswer, for requester: any Requester) {
        let room = requester.room
        if answer.applies, let seq, let name = requester.sessionName { advanceMark(name.value, to: seq, in: room) }
        if let idempotency = requester.idempotency, !answer.isUnavailable {
            advanceMark(idempotency.markName, to: 1, answer: idempotency.recorded(answer), in: room)
        }
        reply(answer, to: requester)
    }

    private func advanceMark(_ name: String, to seq: Int, answer: String? = nil, in room: Room) {
        // A no-op action has no change to store: the mark is stored on its own, and the answer waits for it all the
        // same.
        let mark = RoomTurn.moveMark(
            name, to: seq, answer: answer, in: room.name, marks: &room.marks, now: Date().timeIntervalSince1970,
            idleSeconds: configuration.sessionIdle.seconds, limit: configuration.sessionLimit)
        pipeline.markMoved(mark, in: room, server: self)
    }
}

extension Session {
    /// The session named in the handshake (`session=`), if any, as its token's subject owns it where there are
    /// tokens; the handshake refused an invalid one.
    var sessionName: SessionName? {
        guard let name = connection.query["session"].flatMap(SessionName.init) else { return nil }
        return role == nil ? name : name.owned(by: subject)
    }
}

extension Room {
    /// Sends `session`'s client a snapshot of the room as it is now: at once, or once the changes it shows are
    /// stored (``Session/synchronise(with:at:released:)``).
    func synchronise(_ session: Session) throws(StoreError) {
        session.synchronise(with: try snapshot(for: session), at: store.version, released: released)
    }

    /// A snapshot for `session`'s client, with its session's stored mark when it has one.
    func snapshot(for session: Session) throws(StoreError) -> OutboundFrame {
        try snapshot(
            for: session.client, seq: session.sessionName.map { marks.storedSeq(for: $0.value) }, sight: session.sight,
            path: session.path)
    }

    /// The `resume` message for `session` at `version`, with the room's epoch and the session's mark.
    func resumeFrame(for session: Session, at version: Int) -> OutboundFrame {
        guard case .object(var message) = ServerMessage.resume(room: name, you: session.client, version: version).json
        else { preconditionFailure("a resume is an object") }
        message["epoch"] = .string(epoch)
        if let name = session.sessionName { message["seq"] = .int(marks.storedSeq(for: name.value)) }
        if let path = session.path { message["path"] = .string(path) }
        return OutboundFrame(text: JSON.object(message).serialized())
    }

    /// Whether a client resuming with `epoch=` (nil when it gave none) is resuming this room's history.
    func isResumable(fromEpoch given: String?) -> Bool {
        given.map { $0 == epoch } ?? true
    }

    /// The epoch of a room whose stored state was migrated to `stateVersion`: its history starts over there. Derived
    /// from the epoch before, so every server of a cluster migrating the room names it alike; random without one.
    static func epoch(migrating epoch: String?, to stateVersion: Int) -> String {
        guard let epoch else { return makeEpoch() }
        return StableDigest.hex(of: "\(epoch)/state-version/\(stateVersion)".utf8)
    }

    /// A new epoch: 128 random bits, so rooms whose history starts over never share one.
    static func makeEpoch() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
