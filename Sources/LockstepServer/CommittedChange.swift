public import LockstepCore
public import LockstepJSON

/// One change of a room as every client received it, once it was as durable as an ack: what
/// ``SyncServer/changes(of:bufferingLimit:)`` yields.
public struct CommittedChange: Sendable, Equatable {
    /// The version the change made.
    public let version: Int
    /// The JSON Patch from the state before it to the state at `version`.
    public let ops: JSONPatch
    /// What made it, who and when.
    public let cause: Cause

    /// A change to `version` by `ops`, made as `cause` says.
    public init(version: Int, ops: JSONPatch, cause: Cause) {
        self.version = version
        self.ops = ops
        self.cause = cause
    }
}
