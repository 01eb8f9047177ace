/// What a write adds to the log besides changes and snapshots: session marks, and the epoch of every room it
/// touches, so both are exactly as durable as the changes they go with.
public struct SessionWrites: Sendable {
    /// Marks that moved, in order; a later mark of the same session replaces an earlier one.
    public var marks: [StoredMark] = []
    /// The epoch of each room the write touches; a room's first stored epoch is kept for its whole history.
    public var epochs: [String: String] = [:]
    /// Timers scheduled (a name again replaces its timer), then timers gone: fired (in the same write as their
    /// change) or cancelled, by room and name.
    public var timers: [StoredTimer] = []
    public var timersGone: [TimerKey] = []
    /// Marks not moved for this many seconds are deleted.
    public var idleSeconds: Double
    /// Most marks kept per room; the least recently moved go first.
    public var limit: Int

    public init(idleSeconds: Double, limit: Int) {
        self.idleSeconds = idleSeconds
        self.limit = limit
    }

    /// Marks moved before this time (seconds since 1970) are idle at `now`.
    public func idleBefore(now: Double) -> Double {
        idleSeconds.isFinite ? now - idleSeconds : -Double.greatestFiniteMagnitude
    }

    public var isEmpty: Bool { marks.isEmpty && epochs.isEmpty && timers.isEmpty && timersGone.isEmpty }
}
