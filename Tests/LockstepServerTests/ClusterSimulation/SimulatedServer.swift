@testable import LockstepServer

/// One simulated server: its rooms in memory, its pending timers (the real ``TimerSchedule``) and its publications of
/// presence, lost when it is killed.
final class SimulatedServer {
    let index: Int
    var alive = true
    /// Counts its lives: what belongs to an earlier one (connections, transactions, reads, notices) is dead.
    var incarnation = 0
    var rooms: [String: SimulatedRoom] = [:]
    var timers = TimerSchedule()
    /// Its clients of each room as published, by room name (the real ``PresencePublication``).
    var publications: [String: PresencePublication] = [:]
    /// With a log of its own: the real group-commit queue, and the write in flight.
    var queue = DurabilityQueue<SimulatedRelease>()
    var localWrite: LocalWrite?

    init(index: Int) {
        self.index = index
    }

    /// Its rooms in name order, never in a dictionary's.
    var sortedRooms: [SimulatedRoom] { rooms.keys.sorted().map { rooms[$0]! } }
}
