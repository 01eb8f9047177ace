@testable import LockstepServer

/// What a simulated server with a log of its own holds back in its real ``DurabilityQueue``: a room's patch or an
/// answer on one of its connections.
struct SimulatedRelease: HeldRelease {
    let room: SimulatedRoom
    let held: SimulatedRoom.Held

    var roomName: String { room.name }

    var isReply: Bool {
        if case .answer = held { return true }
        return false
    }
}
