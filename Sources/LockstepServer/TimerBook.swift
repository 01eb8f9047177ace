import LockstepStorage

/// The pending timers this server knows, by room and name, and the order they come due in: soonest first, those due
/// together in the order they were scheduled. Rooms need not be in memory: a timer only names its room.
///
/// Loop-bound: touched only by ``SyncServer``.
struct TimerBook {
    private(set) var timers: [String: [String: StoredTimer]] = [:]
    /// Every timer's (due, order, key), soonest last, so the next due pops from the end; entries of replaced or gone
    /// timers stay until they come up, and are skipped then.
    private var queue: [(due: Int, order: Int, key: TimerKey)] = []
    private var sorted = true

    /// The timers of `room`, soonest first.
    func pending(in room: String) -> [StoredTimer] {
        (timers[room]?.values).map { $0.sorted { ($0.due, $0.order) < ($1.due, $1.order) } } ?? []
    }

    func count(in room: String) -> Int { timers[room]?.count ?? 0 }

    func timer(_ key: TimerKey) -> StoredTimer? { timers[key.room]?[key.name] }

    /// Adds `timer`, replacing the room's timer of that name.
    mutating func insert(_ timer: StoredTimer) {
        timers[timer.room, default: [:]][timer.name] = timer
        queue.append((timer.due, timer.order, TimerKey(room: timer.room, name: timer.name)))
        sorted = false
    }

    /// Removes the timer at `key`; returns it.
    @discardableResult mutating func remove(_ key: TimerKey) -> StoredTimer? {
        let removed = timers[key.room]?.removeValue(forKey: key.name)
        if timers[key.room]?.isEmpty == true { timers[key.room] = nil }
        return removed
    }

    /// When the soonest pending timer comes due; nil when none is pending.
    mutating func nextDue() -> Int? {
        settle()
        // Entries of timers removed since are dropped as they come up.
        while let last = queue.last, timer(last.key)?.order != last.order { queue.removeLast() }
        return queue.last?.due
    }

    /// The timers due by `now`, in order; they stay in the book until they fire.
    mutating func due(by now: Int) -> [StoredTimer] {
        settle()
        var due: [StoredTimer] = []
        while let last = queue.last, last.due <= now {
            queue.removeLast()
            if let timer = timer(last.key), timer.order == last.order { due.append(timer) }
        }
        return due
    }

    /// Sorts the queue after insertions, dropping entries no timer stands behind any more.
    private mutating func settle() {
        guard !sorted else { return }
        let timers = timers
        queue.removeAll { entry in timers[entry.key.room]?[entry.key.name].map { $0.order != entry.order } ?? true }
        queue.sort { ($0.due, $0.order) > ($1.due, $1.order) }
        sorted = true
    }
}
