import CoreMetrics
import Prometheus

/// The server's counters, kept in its own Prometheus registry and served at `GET /metrics`.
///
/// Each server owns a registry rather than bootstrapping the process-wide metrics system, so an
/// application embedding Lockstep keeps its own metrics setup and tests can run many servers.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let connections: Meter
    let rooms: Meter
    let actions: CoreMetrics.Counter
    let patches: CoreMetrics.Counter
    let deliveries: CoreMetrics.Counter
    let bytesQueued: CoreMetrics.Counter
    let droppedQueues: CoreMetrics.Counter
    let throttled: CoreMetrics.Counter
    let evictions: CoreMetrics.Counter
    let outOfDescriptors: CoreMetrics.Counter
    let descriptorLimit: Meter
    let actionLatency: CoreMetrics.Timer
    private let factory: PrometheusMetricsFactory

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(10), .microseconds(50), .microseconds(100), .microseconds(500),
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(100),
            .milliseconds(500), .seconds(1),
        ]
        self.factory = factory
        connections = Meter(label: "lockstep_connections", factory: factory)
        rooms = Meter(label: "lockstep_rooms", factory: factory)
        actions = CoreMetrics.Counter(label: "lockstep_actions_total", factory: factory)
        patches = CoreMetrics.Counter(label: "lockstep_patches_total", factory: factory)
        deliveries = CoreMetrics.Counter(label: "lockstep_deliveries_total", factory: factory)
        bytesQueued = CoreMetrics.Counter(label: "lockstep_sent_bytes_total", factory: factory)
        droppedQueues = CoreMetrics.Counter(label: "lockstep_dropped_queues_total", factory: factory)
        throttled = CoreMetrics.Counter(label: "lockstep_throttled_total", factory: factory)
        evictions = CoreMetrics.Counter(label: "lockstep_evictions_total", factory: factory)
        outOfDescriptors = CoreMetrics.Counter(label: "lockstep_out_of_descriptors_total", factory: factory)
        descriptorLimit = Meter(label: "lockstep_descriptor_limit", factory: factory)
        actionLatency = CoreMetrics.Timer(label: "lockstep_action_latency_seconds", factory: factory)
    }

    /// Counts one error sent to a client, by its protocol code.
    func error(_ code: String) {
        CoreMetrics.Counter(label: "lockstep_errors_total", dimensions: [("code", code)], factory: factory).increment()
    }

    /// The Prometheus text exposition of every metric.
    func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
