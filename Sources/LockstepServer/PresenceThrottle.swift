/// When a room's next presence goes out and what it says, with no I/O: a join or a leave makes it the full list, a
/// state that changed alone makes it list only the peers whose state changed, and it goes out at most once per
/// interval, whatever happened in between merged into it. The server sleeps until the time it is given and sends what
/// ``due()`` says.
struct PresenceThrottle: Equatable {
    /// What the next presence says.
    enum Presence: Equatable {
        /// Nothing changed since the last one.
        case nothing
        /// The full list: someone joined or left.
        case everyone
        /// The peers whose state changed, with their latest states.
        case changed(Set<String>)
    }

    /// Someone joined or left since the last presence.
    private(set) var membershipChanged = false
    /// The clients (here or on other servers) whose presence state changed since the last presence.
    private(set) var changedStates: Set<String> = []
    /// A presence is due: the server waits for its time.
    private(set) var isScheduled = false
    /// When the last presence went out, on the server's clock.
    private(set) var lastSent: Duration?

    /// Someone joined or left. Returns when the next presence goes out, if the server must now wait for it: `interval`
    /// after the last one (at once for the first).
    mutating func joinedOrLeft(interval: Duration) -> Duration? {
        membershipChanged = true
        return schedule(interval: interval)
    }

    /// The states of `clients` changed: as ``joinedOrLeft(interval:)``.
    mutating func statesChanged(_ clients: some Sequence<String>, interval: Duration) -> Duration? {
        changedStates.formUnion(clients)
        return schedule(interval: interval)
    }

    /// The time came: what the presence says; the throttle starts over.
    mutating func due() -> Presence {
        defer {
            isScheduled = false
            membershipChanged = false
            changedStates.removeAll()
        }
        if membershipChanged { return .everyone }
        return changedStates.isEmpty ? .nothing : .changed(changedStates)
    }

    /// A presence went out at `now`: the next waits its interval from here.
    mutating func sent(at now: Duration) {
        lastSent = now
    }

    private mutating func schedule(interval: Duration) -> Duration? {
        guard !isScheduled else { return nil }
        isScheduled = true
        return lastSent.map { $0 + interval } ?? .zero
    }
}
