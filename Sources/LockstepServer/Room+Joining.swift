import LockstepCore
import LockstepJSON
import LockstepTransport

/// What a client joining a room gets (a snapshot, or a resume with its session's mark), and the epoch that tells
/// whether its resume continues this room's history.
extension Room {
    /// Sends `session`'s client a snapshot of the room as it is now: at once, or once the changes it shows are
    /// stored (``Session/synchronise(with:at:released:)``).
    func synchronise(_ session: Session) throws(StoreError) {
        session.synchronise(with: try snapshot(for: session), at: engine.store.version, released: engine.released)
    }

    /// A snapshot for `session`'s client, with its session's stored mark when it has one.
    func snapshot(for session: Session) throws(StoreError) -> OutboundFrame {
        try snapshot(
            for: session.client, seq: session.sessionName.map { engine.marks.storedSeq(for: $0.value) },
            sight: session.sight,
            path: session.path)
    }

    /// The `resume` message for `session` at `version`, with the room's epoch and the session's mark.
    func resumeFrame(for session: Session, at version: Int) -> OutboundFrame {
        guard case .object(var message) = ServerMessage.resume(room: name, you: session.client, version: version).json
        else { preconditionFailure("a resume is an object") }
        message["epoch"] = .string(epoch)
        if let name = session.sessionName { message["seq"] = .int(engine.marks.storedSeq(for: name.value)) }
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
