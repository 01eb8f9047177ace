import Foundation

/// What a load run measured: printed as a table for people or as one JSON object for scripts (the field list is in
/// `lockstep load --help`), and the source of `lockstep load`'s exit code.
public struct LoadReport: Codable, Sendable {
    /// Latency percentiles in milliseconds: of every delivery, send (scheduled) to receipt, or of every HTTP request,
    /// sent to answered.
    public struct Latency: Codable, Sendable {
        /// The median.
        public var p50: Double
        /// The 90th percentile.
        public var p90: Double
        /// The 99th percentile.
        public var p99: Double
        /// The 99.9th percentile.
        public var p999: Double
        /// The slowest one.
        public var max: Double
        /// Deliveries (or requests) timed.
        public var count: UInt64
    }

    /// The scenario's name (``LoadScenario``'s raw value).
    public var scenario: String
    /// The room URLs, separated by spaces.
    public var url: String
    /// Clients the plan asked for.
    public var clients: Int
    /// Clients whose socket opened.
    public var connected: Int
    /// Clients whose socket never opened.
    public var connectFailures: Int
    /// Open sockets the server closed before the run did.
    public var closedByServer: Int
    /// Clients that sent actions; 0 for connect.
    public var writers: Int
    /// Actions per second offered (fanout); 0 for burst and connect.
    public var offeredRate: Double
    /// From the start of the timed part to the end of the drain.
    public var durationSeconds: Double
    /// Actions sent.
    public var sent: Int
    /// Actions scheduled while their writer was not connected.
    public var unsent: Int
    /// Actions acknowledged.
    public var acked: Int
    /// Error messages received.
    public var errors: Int
    /// Acked actions (for http, requests) over the time to the last ack.
    public var actionsPerSecond: Double
    /// Patches received by all clients.
    public var deliveries: Int
    /// Bytes of the text messages all clients received in the timed part (and its drain).
    public var receivedBytes: Int
    /// Deliveries over the time to the last delivery.
    public var deliveriesPerSecond: Double
    /// Scheduled send to receipt, every delivery.
    public var latencyMs: Latency
    /// HTTP (``LoadScenario/http``): each request, sent to answered; nil for the other scenarios.
    public var requestLatencyMs: Latency?
    /// Patches that were not exactly the next version (or, with views or private parts, not above the last).
    public var gaps: Int
    /// Acked changes some open client neither received nor skipped through a resync snapshot.
    public var missing: Int
    /// Resync snapshots after each client's first.
    public var snapshots: Int
    /// Clients that received a resync snapshot.
    public var resyncedClients: Int
    /// The generator's own CPU (getrusage, every process, whole run).
    public var generatorCPUSeconds: Double
    /// Connect with ``LoadPlan/serverPID``: the server's RSS before the sockets opened.
    public var serverRSSBeforeKiB: Int?
    /// Connect with ``LoadPlan/serverPID``: the server's RSS while they were held.
    public var serverRSSAfterKiB: Int?
    /// Connect with ``LoadPlan/serverPID``: the server's RSS growth per connected client.
    public var serverRSSPerConnectionBytes: Int?
    /// The server's user and system CPU over the timed part of the run (with ``LoadPlan/serverPID``).
    public var serverCPUSeconds: Double?
    /// The first error message or unexpected close, as received.
    public var firstError: String?
    /// Every client connected and stayed, nothing was lost or out of order, and (but for connect) every action was
    /// sent and acked without an error.
    public var passed: Bool

    /// The report as one JSON object with sorted keys, for scripts.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The report as a table, for people.
    public func table() -> String {
        func number(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
        func spread(_ latency: Latency) -> String {
            "p50 \(number(latency.p50, 2))  p90 \(number(latency.p90, 2))  p99 \(number(latency.p99, 2))  "
                + "p99.9 \(number(latency.p999, 2))  max \(number(latency.max, 2))"
        }
        var lines = [
            "lockstep load: \(scenario) on \(url)",
            "  clients          \(connected)/\(clients) connected, \(connectFailures) failed, "
                + "\(closedByServer) closed by server",
        ]
        if scenario != LoadScenario.connect.rawValue {
            lines += [
                "  writers          \(writers)"
                    + (offeredRate > 0 ? " at \(number(offeredRate, 0)) actions/s offered" : "")
                    + (scenario == LoadScenario.http.rawValue ? " over HTTP, one request at a time each" : ""),
                "  actions          \(sent) sent, \(acked) acked, \(unsent) unsent, \(errors) errors; "
                    + "\(number(actionsPerSecond)) acked/s",
                "  deliveries       \(deliveries); \(number(deliveriesPerSecond, 0))/s",
                "  latency (ms)     " + spread(latencyMs),
            ]
            if let requestLatencyMs { lines.append("  request (ms)     " + spread(requestLatencyMs)) }
            lines.append(
                "  integrity        \(gaps) gaps, \(missing) missing, \(snapshots) resync snapshots "
                    + "(\(resyncedClients) clients)")
        }
        if let before = serverRSSBeforeKiB, let after = serverRSSAfterKiB {
            let per = serverRSSPerConnectionBytes.map { "\($0) bytes per connection" } ?? "n/a per connection"
            lines.append("  server RSS       \(before) KiB -> \(after) KiB, \(per)")
        }
        lines.append(
            "  generator CPU    \(number(generatorCPUSeconds, 2)) s over \(number(durationSeconds)) s "
                + "(\(number(generatorCPUSeconds / Swift.max(durationSeconds, 0.001) * 100, 0)) % of one core)"
        )
        if let serverCPUSeconds {
            let perDelivery =
                deliveries > 0 ? ", \(number(serverCPUSeconds / Double(deliveries) * 1e6, 2)) µs per delivery" : ""
            lines.append("  server CPU       \(number(serverCPUSeconds, 2)) s\(perDelivery)")
        }
        if let firstError { lines.append("  first error      \(firstError.prefix(200))") }
        lines.append("result: \(passed ? "PASS" : "FAIL")")
        return lines.joined(separator: "\n")
    }
}
