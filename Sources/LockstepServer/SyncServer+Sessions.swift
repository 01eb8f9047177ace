import Foundation
import LockstepCore
import LockstepJSON
import LockstepStorage
import LockstepTransport

/// Sessions: a client that names one (`session=`) numbers its change requests (`seq`), and the room remembers the
/// highest number it acknowledged, so a request sent again after a reconnection is answered, not applied twice.
extension SyncServer {
    /// True when `request` is to be applied; false when it was answered here: a duplicate gets an ack with
    /// `"duplicate":true`, a `seq` on a connection without a session gets `bad_message`.
    func isNew(_ request: ClientRequest, from session: Session) -> Bool {
        guard let seq = request.seq else { return true }
        guard let name = session.sessionName else {
            send(
                .error(
                    id: request.message.id, code: "bad_message",
                    message: "\"seq\" needs a session: connect with session=NAME"),
                to: session)
            return false
        }
        guard seq <= session.room.marks.seq(for: name) else { return true }
        let ack = ServerMessage.ack(id: request.message.id, version: session.room.store.version)
        guard case .object(var ack) = ack.json else { preconditionFailure("an ack is an object") }
        ack["duplicate"] = true
        reply(OutboundFrame(text: JSON.object(ack).serialized()), to: session)
        return false
    }

    /// Acknowledges a change, first moving the sender's session mark up to the request's `seq`: in memory at once,
    /// and in the log in the same write as the change, so the ack, sent after that write, covers both.
    func acknowledge(id: String?, version: Int, seq: Int?, to session: Session) {
        if let seq, let name = session.sessionName { advanceMark(of: name, to: seq, in: session.room) }
        send(.ack(id: id, version: version), to: session)
    }

    private func advanceMark(of name: SessionName, to seq: Int, in room: Room) {
        let now = Date().timeIntervalSince1970
        room.marks.advance(
            name, to: seq, now: now, idleSeconds: configuration.sessionIdle.seconds, limit: configuration.sessionLimit)
        // A no-op action has no change to store: the mark is stored on its own, and the ack waits for it all the same.
        let mark = StoredMark(room: room.name, session: name.value, seq: seq, time: now)
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
    /// A snapshot for `session`'s client, with its session's stored mark when it has one.
    func snapshot(for session: Session) throws(StoreError) -> OutboundFrame {
        try snapshot(
            for: session.client, seq: session.sessionName.map { marks.storedSeq(for: $0) }, view: session.view,
            path: session.path)
    }

    /// The `resume` message for `session` at `version`, with the room's epoch and the session's mark.
    func resumeFrame(for session: Session, at version: Int) -> OutboundFrame {
        guard case .object(var message) = ServerMessage.resume(room: name, you: session.client, version: version).json
        else { preconditionFailure("a resume is an object") }
        message["epoch"] = .string(epoch)
        if let name = session.sessionName { message["seq"] = .int(marks.storedSeq(for: name)) }
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
        let bytes = Array("\(epoch)/state-version/\(stateVersion)".utf8)
        // FNV-1a, twice with different offsets: stable across processes, unlike `Hasher`.
        return [0xcbf2_9ce4_8422_2325, 0x6c62_272e_07bb_0142].map { (offset: UInt64) in
            let hash = bytes.reduce(offset) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
            let hex = String(hash, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
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
