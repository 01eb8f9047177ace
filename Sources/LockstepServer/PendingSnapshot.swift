import LockstepCore
import LockstepJSON
import LockstepStorage

/// A room's state and history at one version, taken on the loop (both are values, so taking them copies nothing) and
/// encoded as a ``StoredSnapshot`` later, off the loop where the pipeline allows: serializing up to `--undo-depth`
/// history entries is most of what a snapshot costs.
struct PendingSnapshot: Sendable {
    let room: String
    let version: Int
    let state: JSON
    let history: History
    let stateVersion: Int

    func encoded() -> StoredSnapshot {
        StoredSnapshot(
            room: room, version: version, state: state.serialized(), history: HistoryCoding.encode(history),
            stateVersion: stateVersion)
    }

    /// `snapshots` encoded on the task pool, not on the caller's thread.
    static func encodedAway(_ snapshots: [PendingSnapshot]) async -> [StoredSnapshot] {
        guard !snapshots.isEmpty else { return [] }
        return await Task.detached { snapshots.map { $0.encoded() } }.value
    }
}
