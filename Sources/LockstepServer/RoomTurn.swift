import LockstepCore
import LockstepJSON
import LockstepStorage

/// A change request in its room's turn, decided with no I/O: whether it is applied at all, what the store and the
/// app's reducer make of it, the patch every client gets and the record the log keeps, and where its session's mark
/// moves.
///
/// ``RoomEngine`` calls it in each turn, in the server and in the cluster simulation alike.
enum RoomTurn {
    /// The answer to a request that is not applied again, or nil when it is to be applied: a `seq` the session's mark
    /// covers gets an ack with `"duplicate":true`, an idempotency key used before the answer it got then (or
    /// `idempotency_mismatch`), and a `seq` without a session `bad_message`.
    static func answerInstead(
        of request: ClientRequest, session: String?, idempotency: Idempotency?, marks: SessionMarks, version: Int
    ) -> RequestAnswer? {
        let id = request.message.id
        #if LOCKSTEP_MUTANTS
        if Mutant.isActive(.idempotencyKeyIgnored), idempotency != nil { return nil }
        #endif
        if let idempotency {
            return marks.answer(for: idempotency.markName).map { idempotency.replay($0, id: id) }
        }
        guard let seq = request.seq else { return nil }
        guard let session else {
            return .error(id: id, code: "bad_message", message: "\"seq\" needs a session: connect with session=NAME")
        }
        return marks.covers(seq, of: session) ? .ack(id: id, version: version, duplicate: true) : nil
    }

    /// What an action, an undo or a redo makes of the room: its change (nil when the state stays as it was), with the
    /// cause its patch carries, and the effects the reducer asked for. Nil for a request that is not one of those.
    ///
    /// An action the server applies for someone says so with `kind` (`timer`, naming `timer`; `join`, `leave`).
    static func perform(
        _ request: ClientMessage, client: String?, as kind: Cause.Kind? = nil, timer: String? = nil,
        on store: inout any RoomStore, context: ReducerContext
    ) throws(StoreError) -> Performed? {
        let change: Change?
        var effects: [RoomEffect] = []
        var action: JSON?
        switch request {
        case .action(_, let json):
            action = json
            let outcome = try store.send(json: json, context: context)
            change = outcome.change
            effects = outcome.effects
        case .undo(_, let mine):
            change = try mine ? store.undoMine(context: context) : store.undo(context: context)
        case .redo(_, let mine):
            change = try mine ? store.redoMine(context: context) : store.redo(context: context)
        case .revert, .history, .presence, .cancel:
            return nil
        }
        let cause = change.map { change in
            var cause = Cause(change.kind, client: client, id: request.id, action: action)
            if let kind { cause.kind = kind }
            cause.timer = timer
            return cause
        }
        return Performed(change: change, cause: cause, effects: effects)
    }

    /// What a `revert` to `version` makes of the room: one change back to that version's state, rebuilt by `timeline`
    /// (and `older`, the stored changes beyond it), or none when the state is that already. The reducer does not run.
    static func revert(
        to version: Int, id: String?, client: String?, on store: inout any RoomStore, timeline: RoomTimeline,
        older: [StoredChange], context: ReducerContext
    ) throws(TimeTravelError) -> Performed {
        let target = try timeline.state(at: version, from: state(of: store), current: store.version, older: older)
        let change: Change?
        do {
            change = try store.revert(to: version, state: target, context: context)
        } catch {
            throw .broken(error.message)
        }
        let cause = change.map { Cause($0.kind, client: client, id: id, action: nil) }
        return Performed(change: change, cause: cause, effects: [])
    }

    /// The store's state, for rebuilding a past one.
    static func state(of store: any RoomStore) throws(TimeTravelError) -> JSON {
        do {
            return try store.stateJSON()
        } catch {
            throw .broken(error.message)
        }
    }

    /// What ``perform(_:client:as:timer:on:context:)`` made.
    struct Performed {
        let change: Change?
        /// The change's cause, before it is stamped with its time and sender (``patch(of:cause:context:history:)``).
        let cause: Cause?
        let effects: [RoomEffect]
    }

    /// The patch message of `change`, as every client of the room gets it and the log keeps it, and its record of
    /// authors and inverse.
    static func patch(of change: Change, cause: Cause, context: ReducerContext, history: History) -> Patch {
        let cause = cause.stamped(at: context.time, by: context.sender)
        let message = ServerMessage.patch(
            version: change.version, ops: change.patch, cause: cause, undo: history.undoCount,
            redo: history.redoCount)
        return Patch(cause: cause, bytes: message.serialized(), record: ChangeRecord(change, authors: history.authors))
    }

    /// What ``patch(of:cause:context:history:)`` encodes.
    struct Patch {
        let cause: Cause
        let bytes: [UInt8]
        let record: ChangeRecord
    }

    /// The marks a request answered in its turn moves, in memory at once; each is to be stored in the same write as
    /// the request's change, so the answer, sent after that write, covers both.
    ///
    /// A request that took effect (``RequestAnswer/applies``) moves its session's mark up to its `seq`; one with an
    /// idempotency key keeps its answer in the key's mark, a refusal too, unless it was `unavailable` (it may be sent
    /// again as it is).
    static func marksMoved(
        by answer: RequestAnswer, seq: Int?, session: String?, idempotency: Idempotency?, in room: String,
        marks: inout SessionMarks, now: Double, writes: SessionWrites
    ) -> [StoredMark] {
        var moved: [StoredMark] = []
        func move(_ name: String, to seq: Int, answer: String? = nil) {
            marks.advance(name, to: seq, answer: answer, now: now, idleSeconds: writes.idleSeconds, limit: writes.limit)
            moved.append(
                StoredMark(
                    room: room, session: name, seq: seq, time: now, answer: answer,
                    holes: marks.holesToStore(for: name)))
        }
        if answer.applies, let seq, let session { move(session, to: seq) }
        if let idempotency, !answer.isUnavailable {
            move(idempotency.markName, to: 1, answer: idempotency.recorded(answer))
        }
        return moved
    }
}
