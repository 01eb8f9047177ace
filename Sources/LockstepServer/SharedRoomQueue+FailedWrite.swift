#if LOCKSTEP_MUTANTS
import LockstepCore
#endif

extension SharedRoomQueue.Ending {
    /// What the sender of one item of a write that failed is told.
    enum Answer {
        /// The connection is sent away to resume, unless it has left the room already.
        case sendAway(Input.Connection)
        /// A request whose `seq` a stored write applied before: acknowledged again, as a duplicate.
        case duplicate(Input)
        /// An input without a connection in a write whose commit went unanswered: perhaps stored, so its sender
        /// must send it again with its idempotency key, which tells.
        case unknown(Input)
        /// Not stored: `unavailable`.
        case unavailable(Input)
        /// A reply the write held, sent as it is.
        case send(Reply)
    }

    /// The answers to a failed write's batch, in its order (``failures``). A request's `seq` that the write took back
    /// becomes a hole in `marks`, so that the same `seq` sent again is applied, not taken for a duplicate.
    func answers(marks: inout SessionMarks, now: Double) -> [Answer] {
        failures.map { failure in
            switch failure {
            case .sendAway(let connection):
                return .sendAway(connection)
            case .send(let reply):
                return .send(reply)
            case .answer(let input) where isUncertain:
                #if LOCKSTEP_MUTANTS
                if Mutant.isActive(.uncertainKeyedAnsweredUnavailable) { return .unavailable(input) }
                #endif
                return .unknown(input)
            case .answer(let input):
                if let (session, seq) = input.sessionSeq, marks.writeFailed(seq, of: session, now: now) == .duplicate {
                    return .duplicate(input)
                }
                return .unavailable(input)
            }
        }
    }
}
