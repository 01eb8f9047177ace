/// One change as the log keeps it: the patch message exactly as clients received it.
public struct StoredChange: Sendable, Equatable {
    public let room: String
    public let version: Int
    /// The `patch` message's bytes (version, ops, cause, undo and redo counts).
    public let message: [UInt8]
    /// How to take the change back: a serialized ``ChangeRecord``.
    public let record: [UInt8]

    public init(room: String, version: Int, message: [UInt8], record: [UInt8]) {
        self.room = room
        self.version = version
        self.message = message
        self.record = record
    }

    /// The change's record, parsed.
    public func parsedRecord() throws -> ChangeRecord {
        try ChangeRecord(bytes: record)
    }
}
