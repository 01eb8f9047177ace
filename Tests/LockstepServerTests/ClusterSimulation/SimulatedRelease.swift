@testable import LockstepServer

/// What a simulated server holds back in a real ``DurabilityQueue`` (its own log's, or a room's on a shared log): a
/// room's patch or an answer on one of its connections.
struct SimulatedRelease: HeldRelease {
    let room: SimulatedRoom
    let held: SimulatedRoom.Held

    var roomName: String { room.name }

    var isReply: Bool {
        if case .answer = held { return true }
        return false
    }
}
