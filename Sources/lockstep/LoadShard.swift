import Dispatch
import Histogram
import LockstepTransport
import Synchronization

/// One `WebSocketClient` (one libwebsockets context, one loop thread) and the simulated clients it services.
///
/// A single loop thread tops out near a core's worth of frame reads, so `lockstep load` spreads its sockets over
/// several shards. Everything a receive touches (latency histograms, per-connection state) is shard-local and
/// loop-bound, so the hot path takes no lock; totals the main thread shows live are relaxed atomics.
// @unchecked Sendable: the `var`s (`connections`, `writers`, both histograms, `firstError`, `lastDeliveryNanos`,
// `lastAckNanos`, `closing`) are read and written only on `client.loop`'s thread — by delegate callbacks and by
// closures passed to `client.loop.execute`/`onLoop`; the main thread only reads the `let` atomics and constants.
final class LoadShard: @unchecked Sendable {
    let client: WebSocketClient
    /// The action every writer sends, as JSON text.
    let actionJSON: String
    /// Whether `actionJSON` has an `$ID` to replace with each action's id.
    let actionHasID: Bool
    /// Burst: actions each writer keeps in flight; 0 for the open-loop schedule.
    let burstWindow: Int

    // Loop-thread state.
    private(set) var connections: [LoadConnection] = []
    private(set) var writers: [Int: LoadConnection] = [:]
    private(set) var histogram = LoadShard.makeHistogram()
    private var intervalHistogram = LoadShard.makeHistogram()
    private(set) var firstError: String?
    private(set) var lastDeliveryNanos: UInt64 = 0
    private(set) var lastAckNanos: UInt64 = 0
    /// Set when the generator closes its sockets, so those closes are not counted as losses.
    var closing = false

    // Live totals, read by the main thread.
    let opened = Atomic<Int>(0)
    let ready = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let lost = Atomic<Int>(0)
    let sent = Atomic<Int>(0)
    let unsent = Atomic<Int>(0)
    let acks = Atomic<Int>(0)
    let maxAckedVersion = Atomic<Int>(0)
    let deliveries = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    let gaps = Atomic<Int>(0)
    let resyncs = Atomic<Int>(0)
    let running = Atomic<Bool>(true)
    /// The p99 (µs) of the last interval, published by `refreshIntervalP99` for the progress line.
    let intervalP99 = Atomic<UInt64>(0)

    init(actionJSON: String, burstWindow: Int, trustedCertificatesFile: String?) throws(LoadError) {
        do {
            client = try WebSocketClient(
                maxMessageBytes: 64 << 20, receiveBufferBytes: 16 * 1024,
                trustedCertificatesFile: trustedCertificatesFile)
        } catch {
            throw .transport("cannot create a WebSocket client context: \(error)")
        }
        self.actionJSON = actionJSON
        actionHasID = actionJSON.contains("$ID")
        self.burstWindow = burstWindow
    }

    /// Microseconds from 1 µs to 10 minutes at 3 significant digits.
    private static func makeHistogram() -> Histogram<UInt64> {
        Histogram(lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three)
    }

    /// Runs `body` on the loop thread and waits for its result. Never call it on the loop thread.
    func onLoop<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        let box = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        client.loop.execute {
            let result = body()
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }

    // MARK: - Called by connections (loop thread)

    func connectionOpened(_ connection: LoadConnection) {
        connections.append(connection)
        opened.add(1, ordering: .relaxed)
    }

    func connectionReady(_ connection: LoadConnection) {
        if let writer = connection.writer { writers[writer] = connection }
        ready.add(1, ordering: .relaxed)
    }

    func connectionLost(_ connection: LoadConnection, wasOpen: Bool, reason: String) {
        if wasOpen {
            lost.add(1, ordering: .relaxed)
            if let writer = connection.writer { writers[writer] = nil }
        } else {
            failed.add(1, ordering: .relaxed)
        }
        if firstError == nil { firstError = wasOpen ? "connection closed: \(reason)" : "connect failed: \(reason)" }
    }

    func recordLatency(nanos: UInt64) {
        let micros = Swift.max(1, Swift.min(nanos / 1000, 600_000_000))
        _ = histogram.record(micros)
        _ = intervalHistogram.record(micros)
    }

    func delivered(at now: UInt64) {
        lastDeliveryNanos = now
        deliveries.add(1, ordering: .relaxed)
    }

    func acked(version: Int) {
        lastAckNanos = LoadClock.now()
        acks.add(1, ordering: .relaxed)
        var current = maxAckedVersion.load(ordering: .relaxed)
        while version > current {
            let (exchanged, original) = maxAckedVersion.compareExchange(
                expected: current, desired: version, ordering: .relaxed
            )
            if exchanged { break }
            current = original
        }
    }

    func recordError(_ text: String) {
        errors.add(1, ordering: .relaxed)
        if firstError == nil { firstError = text }
    }

    // MARK: - Called by the main thread through the loop

    /// Sends the actions whose scheduled times have come, each through its writer. Loop thread.
    func send(_ due: [(writer: Int, scheduledNanos: UInt64)]) {
        for item in due {
            if let connection = writers[item.writer] {
                connection.sendAction(scheduledNanos: item.scheduledNanos)
            } else {
                unsent.add(1, ordering: .relaxed)
            }
        }
    }

    /// Burst: fills every writer's window. Loop thread.
    func startBurst() {
        for connection in writers.values {
            for _ in 0..<burstWindow { connection.sendAction(scheduledNanos: LoadClock.now()) }
        }
    }

    /// Publishes the p99 of the latencies recorded since the last call and starts a new interval. Loop thread.
    func refreshIntervalP99() {
        intervalP99.store(
            intervalHistogram.totalCount == 0 ? 0 : intervalHistogram.valueAtPercentile(99), ordering: .relaxed
        )
        intervalHistogram.reset()
    }

    /// The lowest version any open connection has reached (nil when none is open). Loop thread.
    func lowestVersion() -> Int? {
        connections.lazy.filter { !$0.lost }.compactMap(\.version).min()
    }

    /// Closes every connection on purpose. Loop thread.
    func closeAll() {
        closing = true
        for connection in connections { connection.close() }
    }

    /// The shard's share of the final report. Loop thread.
    func summary(expectedDeliveries: Int) -> LoadShardSummary {
        var summary = LoadShardSummary(histogram: histogram, firstError: firstError)
        summary.lastDeliveryNanos = lastDeliveryNanos
        summary.lastAckNanos = lastAckNanos
        for connection in connections where !connection.lost {
            let covered = connection.delivered + connection.resyncedVersions
            summary.missing += Swift.max(0, expectedDeliveries - covered)
            if connection.resyncs > 0 { summary.resyncedClients += 1 }
        }
        return summary
    }
}
