import LockstepCore
import LockstepJSON
import LockstepStorage
import Logging

/// Timers (1.3) in the room's turn: scheduled, cancelled and fired with the server's book (``TimerSchedule``), and
/// stored with the turn's changes, so a fired timer's change and its row's removal go in one write.
extension RoomEngine {
    /// Schedules a request's action: replaces the room's timer of that name, answered `scheduled` once it is stored.
    mutating func schedule(_ request: ClientRequest, timer: TimerRequest, from source: Source, in step: inout Step) {
        guard case .action(let id, let action) = request.message else { return }
        let answer: RequestAnswer
        do {
            try checkReads(of: action, by: source.subject, in: step)
            let record = TimerRecord(id: id, action: action, sender: source.sender)
            let (name, due) = try schedule(record, after: timer.after, timer: timer.name, in: &step)
            answer = .scheduled(id: id, timer: name, due: due)
        } catch {
            answer = .error(id: id, code: error.code, message: message(of: error, for: source.subject, in: step))
        }
        finish(seq: request.seq, with: answer, from: source, in: &step)
    }

    /// Schedules an effect's action (``Effect/schedule(_:after:timer:)``) as `sender`'s.
    mutating func schedule(
        _ action: JSON, after delay: Duration, timer: String?, from sender: Sender?, in step: inout Step
    ) {
        let record = TimerRecord(id: nil, action: action, sender: sender ?? Sender(client: "server"))
        let milliseconds = Int(max(.zero, delay) / .milliseconds(1))
        do {
            let name = timer.flatMap { TimerRequest.isValidName($0) ? $0 : nil }
            _ = try schedule(record, after: milliseconds, timer: name, in: &step)
        } catch {
            step.emit(.notice(.warning, "an effect's timer is refused", reason: error.message, client: sender?.client))
        }
    }

    /// Adds `record` as the room's timer `name` (or a new name), due `after` milliseconds from now, replacing the one
    /// of that name. Returns the name and when it is due.
    private mutating func schedule(
        _ record: TimerRecord, after: Int, timer name: String?, in step: inout Step
    ) throws(StoreError) -> (name: String, due: Int) {
        let name = name ?? "t-" + Room.makeEpoch().prefix(12)
        let key = TimerKey(room: self.name, name: name)
        let book = step.timers.book
        guard book.timer(key) != nil || book.count(in: self.name) < step.rules.maxTimers else {
            throw .rejected(
                "the room has \(step.rules.maxTimers) pending timers, the most it may hold (--max-timers)")
        }
        let now = step.time.milliseconds
        let (stored, wait) = step.timers.schedule(
            room: self.name, name: name, due: now + after, request: record.encoded, now: now)
        loggedTimers?[name] = stored.order
        step.emit(.timers(scheduled: [stored], gone: []))
        step.emit(.wait(wait))
        return (name, stored.due)
    }

    /// Takes the room's timer `name` away, if it is pending. Its stored row goes whatever the server's book holds: on
    /// several servers the timer may have been scheduled through another and not read here yet.
    mutating func cancelTimer(_ name: String, in step: inout Step) {
        let key = TimerKey(room: self.name, name: name)
        step.emit(.wait(step.timers.remove(key)))
        loggedTimers?[name] = nil
        step.emit(.timers(scheduled: [], gone: [key]))
    }

    /// Applies a timer that came due, unless it was replaced or cancelled meanwhile (or, on several servers, another
    /// server applied it): its action as its sender, and its row's removal, in one write.
    mutating func fire(_ timer: StoredTimer, in step: inout Step) {
        let key = TimerKey(room: timer.room, name: timer.name)
        guard step.timers.book.timer(key)?.order == timer.order else { return }
        step.emit(.wait(step.timers.remove(key)))
        #if LOCKSTEP_MUTANTS
        let checksRow = !Mutant.isActive(.timerFiresWithoutRowCheck)
        let removesInWrite = !Mutant.isActive(.firedTimerRowRemovedSeparately)
        #else
        let checksRow = true
        let removesInWrite = true
        #endif
        // Another server applied or cancelled it.
        if checksRow, let loggedTimers, loggedTimers[timer.name] != timer.order { return }
        if removesInWrite {
            loggedTimers?[timer.name] = nil
            step.emit(.timers(scheduled: [], gone: [key]))
        }
        guard let record = TimerRecord(timer.request) else {
            return step.emit(.notice(.error, "a timer cannot be read; it is dropped", reason: timer.name, client: nil))
        }
        let source = Source(detached: record.sender)
        change(
            .action(id: record.id, action: record.action), seq: nil, from: source, as: .timer, timer: timer.name,
            in: &step)
        step.detach(from: record.sender)
    }
}
