/// What the log holds for one room: its latest snapshot and every change after it, oldest first.
public struct StoredRoom: Sendable {
    /// Nil when the room never reached a snapshot: replay from the app's initial state.
    public let snapshot: StoredSnapshot?
    public let changes: [StoredChange]

    public init(snapshot: StoredSnapshot?, changes: [StoredChange]) {
        self.snapshot = snapshot
        self.changes = changes
    }
}
