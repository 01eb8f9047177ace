import LockstepCore
import LockstepJSON
import LockstepStorage
import Logging

/// One input's turn: whether it is applied at all, what the store and the app's reducer make of it, the marks and
/// timers it moves, its answer, and the effects it starts.
extension RoomEngine {
    /// Applies `input` in the room's turn and returns what must happen, in order. `timers` is the server's book of
    /// pending timers (every room's), which a timer scheduled, cancelled or fired changes; `epoch` names the room's
    /// history for the reducer.
    mutating func take(
        _ input: Input, at time: Time, epoch: String, rules: Rules, timers: inout TimerSchedule
    ) -> Turn {
        var step = Step(time: time, epoch: epoch, rules: rules)
        // The book moves into the step and back, never copied: it holds every room's timers.
        swap(&step.timers, &timers)
        defer { swap(&step.timers, &timers) }
        switch input {
        case .request(let request, let source, let older):
            if let answer = RoomTurn.answerInstead(
                of: request, session: source.session, idempotency: source.idempotency, marks: marks,
                version: store.version)
            {
                return Turn(outputs: [.answer(answer)], applied: false)
            }
            apply(request, from: source, older: older, in: &step)
        case .effect(let action, let sender):
            apply(action, from: sender, in: &step)
        case .timer(let timer):
            fire(timer, in: &step)
        case .membership(let action, let sender, let kind):
            change(.action(id: nil, action: action), seq: nil, from: Source(detached: sender), as: kind, in: &step)
            step.detach(from: sender)
        }
        return step.turn
    }

    /// What one turn reads and makes.
    struct Step {
        let time: Time
        let epoch: String
        let rules: Rules
        var timers = TimerSchedule()
        var turn = Turn()

        mutating func emit(_ output: Output) {
            turn.outputs.append(output)
        }

        /// The turn applied a request made for `sender` (a timer, a join): nobody waits for its answer, and a refusal
        /// is the operator's to hear of.
        mutating func detach(from sender: Sender) {
            turn.outputs = turn.outputs.compactMap { output in
                guard case .answer(let answer) = output else { return output }
                guard case .error(_, let code, let message) = answer else { return nil }
                return .notice(
                    .info, "an action the server applied for a client changed nothing", reason: "\(code): \(message)",
                    client: sender.client)
            }
        }
    }

    /// A request applied in its turn: a timer scheduled, one cancelled, or a change.
    private mutating func apply(
        _ request: ClientRequest, from source: Source, older: [StoredChange], in step: inout Step
    ) {
        if let timer = request.timer { return schedule(request, timer: timer, from: source, in: &step) }
        if case .cancel(let id, let name) = request.message {
            cancelTimer(name, in: &step)
            return finish(seq: request.seq, with: .scheduled(id: id, timer: name, due: nil), from: source, in: &step)
        }
        change(request.message, seq: request.seq, from: source, older: older, in: &step)
    }

    /// Applies a change request; an action the server applies for someone says so with `kind` (`timer`, naming
    /// `timer`, `join` or `leave`). It is answered after its own change; its effects' changes follow the answer.
    mutating func change(
        _ request: ClientMessage, seq: Int?, from source: Source, older: [StoredChange] = [],
        as kind: Cause.Kind? = nil, timer: String? = nil, in step: inout Step
    ) {
        let context = context(for: source, in: step)
        if case .revert(let id, let version) = request {
            return revert(to: version, id: id, seq: seq, from: source, older: older, context: context, in: &step)
        }
        do {
            if case .action(_, let action) = request {
                step.turn.actions += 1
                try checkReads(of: action, by: source.subject, in: step)
            }
            guard
                let performed = try RoomTurn.perform(
                    request, client: source.client, as: kind, timer: timer, on: &store, context: context)
            else { return }
            if let change = performed.change, let cause = performed.cause {
                commit(change, cause: cause, context: context, in: &step)
            }
            finish(seq: seq, with: .ack(id: request.id, version: store.version), from: source, in: &step)
            run(performed.effects, from: context.sender, in: &step)
        } catch {
            let answer = RequestAnswer.error(
                id: request.id, code: error.code, message: message(of: error, for: source.subject, in: step))
            finish(seq: nil, with: answer, from: source, in: &step)
        }
    }

    /// Puts the room back to the state of `version` as one new change, or acknowledges a no-op when that state is the
    /// current one. The reducer does not run and no effect starts. `older` holds the stored changes beyond memory that
    /// the rebuild needs.
    private mutating func revert(
        to version: Int, id: String?, seq: Int?, from source: Source, older: [StoredChange], context: ReducerContext,
        in step: inout Step
    ) {
        do throws(TimeTravelError) {
            let performed = try RoomTurn.revert(
                to: version, id: id, client: source.client, on: &store, timeline: timeline, older: older,
                context: context)
            if let change = performed.change, let cause = performed.cause {
                commit(change, cause: cause, context: context, in: &step)
            }
            finish(seq: seq, with: .ack(id: id, version: store.version), from: source, in: &step)
        } catch {
            finish(seq: nil, with: .error(id: id, code: error.code, message: error.message), from: source, in: &step)
        }
    }

    /// A change made: its patch as every client gets it and the log keeps it, as each view gets it, and its inverse
    /// in the timeline.
    private mutating func commit(_ change: Change, cause: Cause, context: ReducerContext, in step: inout Step) {
        let encoded = RoomTurn.patch(of: change, cause: cause, context: context, history: store.history)
        let current = store
        let patch = Room.loggedPatch(
            change, encoded: encoded, history: store.history, views: &views, after: { try current.stateJSON() })
        timeline.record(version: patch.version, inverse: change.inverse, stored: releasedVersion)
        step.emit(.commit(Commit(change: change, encoded: encoded, patch: patch)))
    }

    /// The marks the answer moves (``RoomTurn/marksMoved(by:seq:session:idempotency:in:marks:now:writes:)``), stored
    /// with the turn's changes, then the answer, which leaves once they are stored.
    mutating func finish(seq: Int?, with answer: RequestAnswer, from source: Source, in step: inout Step) {
        let moved = RoomTurn.marksMoved(
            by: answer, seq: seq, session: source.session, idempotency: source.idempotency, in: name, marks: &marks,
            now: step.time.markSeconds, writes: step.rules.sessionWrites)
        for mark in moved { step.emit(.mark(mark)) }
        step.emit(.answer(answer))
    }

    /// Applies the reducer's effects: `.send` and timers now, in the turn; `.run` work is started by the server.
    private mutating func run(_ effects: [RoomEffect], from sender: Sender?, in step: inout Step) {
        for effect in effects {
            switch effect {
            case .send(let action):
                apply(action, from: sender, in: &step)
            case .run(let work):
                step.emit(.run(work, sender: sender))
            case .schedule(let action, let delay, let timer):
                schedule(action.json, after: delay, timer: timer, from: sender, in: &step)
            case .cancel(let timer):
                cancelTimer(timer, in: &step)
            }
        }
    }

    /// An effect's action, as `sender`'s (whose action started the effect); one the app rejects changes nothing.
    private mutating func apply(_ action: EffectAction, from sender: Sender?, in step: inout Step) {
        let context = context(for: sender, in: step)
        do {
            let outcome = try store.send(effect: action, context: context)
            if let change = outcome.change {
                commit(change, cause: Cause(kind: .effect, action: action.json), context: context, in: &step)
            }
            run(outcome.effects, from: sender, in: &step)
        } catch {
            step.emit(.notice(.warning, "an effect's action failed", reason: error.message, client: sender?.client))
        }
    }
}
