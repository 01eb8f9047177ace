public import LockstepCore

/// The room's timers in a test: what `Effect.schedule` set, fired by ``TestStore/advance(by:)`` on the store's clock.
extension TestStore {
    /// A timer a `.schedule` effect set that has neither fired nor been cancelled.
    public struct PendingTimer: Sendable {
        /// The timer's name: the effect's, or one the store picked (`t-1`, `t-2`, ...) as a server would.
        public let name: String
        /// The action it applies.
        public let action: R.Action
        /// When it fires, in milliseconds since the Unix epoch, on the store's clock (``TestStore/now``).
        public let due: Int
        /// Who scheduled it: the sender of the step whose effect it was; its action is applied as theirs.
        public let sender: Sender?
        /// Orders timers due together: the order they were scheduled in.
        let order: Int
    }

    /// The timers waiting to fire, soonest first.
    public var pendingTimers: [PendingTimer] {
        timers.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
    }

    /// Sets timer `name` (replacing a pending one of that name), due `delay` after the step run in `context`.
    func schedule(_ action: R.Action, after delay: Duration, timer name: String?, by context: ReducerContext) {
        timerCount += 1
        let name = name ?? "t-\(timerCount)"
        timers.removeAll { $0.name == name }
        let due = context.time + Int(max(.zero, delay) / .milliseconds(1))
        timers.append(PendingTimer(name: name, action: action, due: due, sender: context.sender, order: timerCount))
    }
}
