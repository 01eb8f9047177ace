/// A room's state and undo history at one version, so loading it need not replay the whole log.
public struct StoredSnapshot: Sendable, Equatable {
    public let room: String
    public let version: Int
    /// The state as JSON.
    public let state: [UInt8]
    /// The undo and redo stacks, as written by ``HistoryCoding``.
    public let history: [UInt8]
    /// The app's state version (`StateEvolution`) the state is written in, and the changes after it until the next
    /// snapshot; 1 for snapshots stored before apps had state versions.
    public let stateVersion: Int

    public init(room: String, version: Int, state: [UInt8], history: [UInt8], stateVersion: Int = 1) {
        self.room = room
        self.version = version
        self.state = state
        self.history = history
        self.stateVersion = stateVersion
    }
}
