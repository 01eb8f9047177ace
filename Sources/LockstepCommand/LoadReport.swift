import Foundation

/// The outcome of one `lockstep load` run: printed as a table for people or as one JSON object for scripts (the
/// field list is in `lockstep load --help`), and the source of the exit code.
struct LoadReport: Codable, Sendable {
    /// Latency percentiles of every delivery, send (scheduled) to receipt, in milliseconds.
    struct Latency: Codable, Sendable {
        var p50: Double
        var p90: Double
        var p99: Double
        var p999: Double
        var max: Double
        var count: UInt64
    }

    var scenario: String
    var url: String
    var clients: Int
    var connected: Int
    var connectFailures: Int
    var closedByServer: Int
    var writers: Int
    var offeredRate: Double
    var durationSeconds: Double
    var sent: Int
    var unsent: Int
    var acked: Int
    var errors: Int
    var actionsPerSecond: Double
    var deliveries: Int
    var deliveriesPerSecond: Double
    var latencyMs: Latency
    var gaps: Int
    var missing: Int
    var snapshots: Int
    var resyncedClients: Int
    var generatorCPUSeconds: Double
    var serverRSSBeforeKiB: Int?
    var serverRSSAfterKiB: Int?
    var serverRSSPerConnectionBytes: Int?
    /// The server's user and system CPU over the timed part of the run (with --server-pid).
    var serverCPUSeconds: Double?
    var firstError: String?
    var passed: Bool

    /// Field documentation for `--help`.
    static let fieldHelp = """
        --json prints one object: scenario, url, clients, connected, connectFailures, closedByServer, writers, \
        offeredRate (actions/s; 0 for burst/connect), durationSeconds, sent, unsent (scheduled while the writer was \
        not connected), acked, errors (error messages received), actionsPerSecond (acked / time to last ack), \
        deliveries (patches received by all clients), deliveriesPerSecond (deliveries / time to last delivery), \
        latencyMs {p50, p90, p99, p999, max, count} (scheduled send to receipt, every delivery), gaps (patches not \
        exactly version+1), missing (acked changes some open client neither received nor skipped via a snapshot), \
        snapshots (resync snapshots after the first), resyncedClients, generatorCPUSeconds (getrusage, whole run), \
        serverRSSBeforeKiB/serverRSSAfterKiB/serverRSSPerConnectionBytes (connect with --server-pid), \
        serverCPUSeconds (with --server-pid: its CPU from start to end of the timed part), firstError, passed.
        """

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    func table() -> String {
        func number(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
        var lines = [
            "lockstep load: \(scenario) on \(url)",
            "  clients          \(connected)/\(clients) connected, \(connectFailures) failed, "
                + "\(closedByServer) closed by server",
        ]
        if scenario != LoadScenario.connect.rawValue {
            lines += [
                "  writers          \(writers)"
                    + (offeredRate > 0 ? " at \(number(offeredRate, 0)) actions/s offered" : ""),
                "  actions          \(sent) sent, \(acked) acked, \(unsent) unsent, \(errors) errors; "
                    + "\(number(actionsPerSecond)) acked/s",
                "  deliveries       \(deliveries); \(number(deliveriesPerSecond, 0))/s",
                "  latency (ms)     p50 \(number(latencyMs.p50, 2))  p90 \(number(latencyMs.p90, 2))  "
                    + "p99 \(number(latencyMs.p99, 2))  p99.9 \(number(latencyMs.p999, 2))  "
                    + "max \(number(latencyMs.max, 2))",
                "  integrity        \(gaps) gaps, \(missing) missing, \(snapshots) resync snapshots "
                    + "(\(resyncedClients) clients)",
            ]
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
