/// A room's state and undo history at one version, so loading it need not replay the whole log.
public struct StoredSnapshot: Sendable, Equatable {
    public let room: String
    public let version: Int
    /// The state as JSON.
    public let state: [UInt8]
    /// The undo and redo stacks, as written by ``HistoryCoding``.
    public let history: [UInt8]

    public init(room: String, version: Int, state: [UInt8], history: [UInt8]) {
        self.room = room
        self.version = version
        self.state = state
        self.history = history
    }
}
