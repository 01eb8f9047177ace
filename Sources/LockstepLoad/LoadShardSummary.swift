import Histogram

/// One shard's results, copied off its loop thread at the end of a run so the main thread can merge them.
struct LoadShardSummary: Sendable {
    var histogram: Histogram<UInt64>
    var firstError: String?
    var lastDeliveryNanos: UInt64 = 0
    var lastAckNanos: UInt64 = 0
    /// Deliveries that open connections never got (neither as patches nor covered by a resync snapshot).
    var missing = 0
    /// Open connections that received at least one resync snapshot.
    var resyncedClients = 0
}
