import Dispatch
import LockstepTransport
import Synchronization

/// One `WebSocketClient` (one libwebsockets context, one loop thread) and the simulated clients it services.
///
/// A single loop thread tops out near a core's worth of frame reads, so `lockstep load` spreads its sockets over
/// several shards. Everything a receive touches (latency histograms, per-connection state) is shard-local and
/// loop-bound, so the hot path takes no lock; totals the main thread shows live are relaxed atomics.
// @unchecked Sendable: the `var`s (`connections`, `writers`, `firstError`, `lastDeliveryNanos`, `lastAckNanos`,
// `closing`) and `latencies` are read and written only on `client.loop`'s thread — by delegate callbacks and by
// closures passed to `client.loop.execute`/`onLoop`; the main thread only reads the `let` atomics and constants.
final class LoadShard: @unchecked Sendable {
    let client: WebSocketClient
    /// The action every writer sends, as JSON text.
    let actionJSON: String
    /// Whether `actionJSON` has an `$ID` to replace with each action's id.
    let actionHasID: Bool
    /// Whether `actionJSON` has a `$PATH` to replace with the pointer each action changes.
    let actionHasPath: Bool
    /// What each client follows and each action changes.
    let layout: LoadLayout
    /// `layout.everyVersionReachesEveryone`, read once: every delivery asks.
    let everyVersionReachesEveryone: Bool
    /// Burst: actions each writer keeps in flight; 0 for the open-loop schedule.
    let burstWindow: Int
    /// Whether the writers send presence states instead of actions (``LoadScenario/presence``).
    let sendsPresence: Bool

    // Loop-thread state.
    private(set) var connections: [LoadConnection] = []
    private(set) var writers: [Int: LoadConnection] = [:]
    private let latencies = LoadLatencies()
    private(set) var firstError: String?
    private(set) var lastDeliveryNanos: UInt64 = 0
    private(set) var lastAckNanos: UInt64 = 0
    /// The versions of the acked actions, by who sees them.
    private var ackedVersions: [LoadAudience: [Int]] = [:]
    private var highestAcked: [LoadAudience: Int] = [:]
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
    /// Acks of setup actions (sent before timing).
    let setupAcks = Atomic<Int>(0)
    let deliveries = Atomic<Int>(0)
    /// Bytes of the text messages received in the timed part.
    let receivedBytes = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    let gaps = Atomic<Int>(0)
    let resyncs = Atomic<Int>(0)
    let running = Atomic<Bool>(true)
    /// The p99 (µs) of the last interval, published by `refreshIntervalP99` for the progress line.
    let intervalP99 = Atomic<UInt64>(0)

    init(
        actionJSON: String, burstWindow: Int, sendsPresence: Bool, trustedCertificatesFile: String?,
        eventLoop: EventLoopBackend, collectInterval: Duration, layout: LoadLayout
    ) throws(LoadError) {
        do {
            client = try WebSocketClient(
                maxMessageBytes: 64 << 20, receiveBufferBytes: 16 * 1024,
                trustedCertificatesFile: trustedCertificatesFile, eventLoop: eventLoop,
                collectInterval: collectInterval)
        } catch {
            throw .transport("cannot create a WebSocket client context: \(error)")
        }
        self.actionJSON = actionJSON
        actionHasID = actionJSON.contains("$ID")
        actionHasPath = actionJSON.contains("$PATH")
        self.layout = layout
        everyVersionReachesEveryone = layout.everyVersionReachesEveryone
        self.burstWindow = burstWindow
        self.sendsPresence = sendsPresence
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

    /// A patch arrived at `now`; `scheduledNanos` is when its action was due, if it was a measured one. Latency and
    /// count in one call, which the connection makes without retaining its shard.
    func delivered(at now: UInt64, scheduledNanos: UInt64?) {
        if let scheduledNanos, now > scheduledNanos { latencies.record(nanos: now - scheduledNanos) }
        lastDeliveryNanos = now
        deliveries.add(1, ordering: .relaxed)
    }

    func acked(version: Int, by audience: LoadAudience) {
        lastAckNanos = LoadClock.now()
        acks.add(1, ordering: .relaxed)
        ackedVersions[audience, default: []].append(version)
        highestAcked[audience] = Swift.max(highestAcked[audience] ?? 0, version)
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
        intervalP99.store(latencies.takeIntervalP99(), ordering: .relaxed)
    }

    /// The acked versions by audience. Loop thread.
    func ackedByAudience() -> [LoadAudience: [Int]] { ackedVersions }

    /// The highest acked version by audience. Loop thread.
    func highestAckedByAudience() -> [LoadAudience: Int] { highestAcked }

    /// How many open connections have not reached the highest acked version of a change they should see, given
    /// every shard's `highestAckedByAudience`. Loop thread.
    func behind(highest: [LoadAudience: Int]) -> Int {
        connections.count(where: { connection in
            guard !connection.lost, let version = connection.version else { return false }
            return highest.contains { entry in
                entry.value > version && entry.key.reaches(client: connection.index, view: connection.view)
            }
        })
    }

    /// Sends the layout's first setup action from client 0, if this shard has it. Loop thread.
    func sendFirstSetup() {
        guard let action = layout.firstSetupAction else { return }
        connections.first { $0.index == 0 }?.sendSetup(action)
    }

    /// Has every open connection create its own private subtree. Returns how many were sent. Loop thread.
    func sendOwnSetup() -> Int {
        var sent = 0
        for connection in connections where !connection.lost {
            guard let action = layout.ownSetupAction(client: connection.index) else { continue }
            connection.sendSetup(action)
            sent += 1
        }
        return sent
    }

    /// Forgets the deliveries and latencies counted so far (the setup's), before timing starts. Loop thread.
    func resetCounts() {
        for connection in connections { connection.resetCounts() }
        deliveries.store(0, ordering: .relaxed)
        receivedBytes.store(0, ordering: .relaxed)
        resyncs.store(0, ordering: .relaxed)
        latencies.reset()
        lastDeliveryNanos = 0
    }

    /// Closes every connection on purpose. Loop thread.
    func closeAll() {
        closing = true
        for connection in connections { connection.close() }
    }

    /// The shard's share of the final report. Loop thread.
    /// `acked` is every shard's acked versions by audience, each sorted.
    func summary(acked: [LoadAudience: [Int]]) -> LoadShardSummary {
        var summary = LoadShardSummary(histogram: latencies.whole, firstError: firstError)
        summary.lastDeliveryNanos = lastDeliveryNanos
        summary.lastAckNanos = lastAckNanos
        for connection in connections where !connection.lost {
            var expected = 0
            var covered = connection.delivered
            for (audience, versions) in acked where audience.reaches(client: connection.index, view: connection.view) {
                expected += versions.count
                for range in connection.resyncedRanges {
                    covered += versions.count(after: range.after) - versions.count(after: range.through)
                }
            }
            summary.missing += Swift.max(0, expected - covered)
            if connection.resyncs > 0 { summary.resyncedClients += 1 }
        }
        return summary
    }
}

extension [Int] {
    /// In a sorted array: how many elements are greater than `value` (a binary search).
    fileprivate func count(after value: Int) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] <= value { low = middle + 1 } else { high = middle }
        }
        return count - low
    }
}
