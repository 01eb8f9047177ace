import LockstepClient
import LockstepJSON

/// The room's state at each version the replay has not checked yet, read from a client's updates, so a state is
/// compared at exactly its version even when later patches (an effect's) arrive before the check.
actor ReplayMirror {
    private var states: [Int: JSON] = [:]

    /// Follows `room`'s updates until they end.
    func follow(_ room: RoomClient) async {
        for await update in room.updates { states[update.version] = update.state }
    }

    /// The state at `version`, waiting up to `timeout` for it; forgets older ones.
    func state(at version: Int, timeout: Duration) async -> JSON? {
        let deadline = ContinuousClock.now + timeout
        while states[version] == nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
        let state = states[version]
        states = states.filter { $0.key > version }
        return state
    }
}
