import Foundation
import LockstepCore

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
