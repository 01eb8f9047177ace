/// One change as the log keeps it: the patch message exactly as clients received it.
public struct StoredChange: Sendable, Equatable {
    public let room: String
    public let version: Int
    /// The `patch` message's bytes (version, ops, cause, undo and redo counts).
    public let message: [UInt8]
    /// The operations reverting this change, as a JSON array.
    public let inverse: [UInt8]

    public init(room: String, version: Int, message: [UInt8], inverse: [UInt8]) {
        self.room = room
        self.version = version
        self.message = message
        self.inverse = inverse
    }
}
