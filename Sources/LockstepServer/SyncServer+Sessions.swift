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

    /// Answers a request in its turn, after the marks it moves (`RoomTurn.marksMoved`), which go with its write.
    /// A no-op action has no change to store: its marks are stored on their own, and the answer waits for them all
    /// the same.
    func finish(seq: Int?, with answer: RequestAnswer, for requester: any Requester) {
        let room = requester.room
        let moved = RoomTurn.marksMoved(
            by: answer, seq: seq, session: requester.sessionName?.value, idempotency: requester.idempotency,
            in: room.name, marks: &room.marks, now: Date().timeIntervalSince1970, writes: configuration.sessionWrites)
        for mark in moved { pipeline.markMoved(mark, in: room, server: self) }
        reply(answer, to: requester)
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
