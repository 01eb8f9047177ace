import Histogram
import Synchronization

/// What one generator process counted in a run: the totals of its shards and their summaries. `lockstep load
/// --processes N` adds up one per process (histograms merged), and every report is made from one.
struct LoadTally: Codable, Sendable {
    var connected = 0
    var connectFailures = 0
    var closedByServer = 0
    var sent = 0
    var unsent = 0
    var acked = 0
    var errors = 0
    var deliveries = 0
    var receivedBytes = 0
    var gaps = 0
    var snapshots = 0
    var missing = 0
    var resyncedClients = 0
    var lastDeliveryNanos: UInt64 = 0
    var lastAckNanos: UInt64 = 0
    var generatorCPUSeconds = 0.0
    var firstError: String?
    var histogram: Histogram<UInt64>
    /// HTTP writers' requests, sent to answered (µs); nil without them.
    var requestHistogram: Histogram<UInt64>?

    /// Adds `shards`' totals and `summaries` (one per shard, in the same order).
    init(shards: [LoadShard], summaries: [LoadShardSummary], cpu: Double) {
        func total(_ counter: (LoadShard) -> Int) -> Int { shards.reduce(0) { $0 + counter($1) } }
        histogram = summaries[0].histogram
        for summary in summaries.dropFirst() { histogram.add(summary.histogram) }
        connected = total { $0.opened.load(ordering: .relaxed) }
        connectFailures = total { $0.failed.load(ordering: .relaxed) }
        closedByServer = total { $0.lost.load(ordering: .relaxed) }
        sent = total { $0.sent.load(ordering: .relaxed) }
        unsent = total { $0.unsent.load(ordering: .relaxed) }
        acked = total { $0.acks.load(ordering: .relaxed) }
        errors = total { $0.errors.load(ordering: .relaxed) }
        deliveries = total { $0.deliveries.load(ordering: .relaxed) }
        receivedBytes = total { $0.receivedBytes.load(ordering: .relaxed) }
        gaps = total { $0.gaps.load(ordering: .relaxed) }
        snapshots = total { $0.resyncs.load(ordering: .relaxed) }
        missing = summaries.reduce(0) { $0 + $1.missing }
        resyncedClients = summaries.reduce(0) { $0 + $1.resyncedClients }
        lastDeliveryNanos = summaries.map(\.lastDeliveryNanos).max() ?? 0
        lastAckNanos = summaries.map(\.lastAckNanos).max() ?? 0
        generatorCPUSeconds = cpu
        firstError = summaries.lazy.compactMap(\.firstError).first
    }

    /// Adds what the HTTP writers counted: their requests as actions, their answers' latencies.
    mutating func add(httpWriters: [LoadHTTPWriter]) {
        for writer in httpWriters {
            sent += writer.sent.load(ordering: .relaxed)
            acked += writer.acked.load(ordering: .relaxed)
            errors += writer.errors.load(ordering: .relaxed)
            lastAckNanos = max(lastAckNanos, writer.lastAckNanos)
            firstError = firstError ?? writer.firstError
            if requestHistogram == nil {
                requestHistogram = writer.latencies
            } else {
                requestHistogram?.add(writer.latencies)
            }
        }
    }

    /// Adds another process's tally to this one.
    mutating func add(_ other: LoadTally) {
        connected += other.connected
        connectFailures += other.connectFailures
        closedByServer += other.closedByServer
        sent += other.sent
        unsent += other.unsent
        acked += other.acked
        errors += other.errors
        deliveries += other.deliveries
        receivedBytes += other.receivedBytes
        gaps += other.gaps
        snapshots += other.snapshots
        missing += other.missing
        resyncedClients += other.resyncedClients
        lastDeliveryNanos = max(lastDeliveryNanos, other.lastDeliveryNanos)
        lastAckNanos = max(lastAckNanos, other.lastAckNanos)
        generatorCPUSeconds += other.generatorCPUSeconds
        firstError = firstError ?? other.firstError
        histogram.add(other.histogram)
        if let requests = other.requestHistogram {
            if requestHistogram == nil { requestHistogram = requests } else { requestHistogram?.add(requests) }
        }
    }
}
