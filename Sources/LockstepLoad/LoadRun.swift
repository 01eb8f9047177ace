import Foundation
import Histogram
import LockstepTransport
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One load run: drives thousands of WebSocket clients against one room of a local server and reports fan-out
/// throughput, delivery latency and integrity (no gap, nothing lost); with ``LoadScenario/http``, its writers post
/// over HTTP instead.
///
/// With ``LoadPlan/processes`` above 1, ``LoadRun/report()`` coordinates that many worker processes, each of
/// which calls ``LoadRun/work(as:)``, and merges what they counted into one report.
public struct LoadRun: Sendable {
    /// What the run does.
    public let plan: LoadPlan
    /// This process's share of a multi-process run; nil when it runs alone or coordinates.
    let worker: Int?

    /// A run of `plan`; it is validated when it runs.
    public init(_ plan: LoadPlan) {
        self.init(plan, worker: nil)
    }

    private init(_ plan: LoadPlan, worker: Int?) {
        self.plan = plan
        self.worker = worker
    }

    /// Runs the plan, in this process or in ``LoadPlan/processes`` worker processes, and returns what it measured.
    /// Throws only when the run could not take place; failures it measured are in the report.
    public func report() throws(LoadError) -> LoadReport {
        try validatePlan()
        if plan.processes > 1 { return try coordinateProcesses() }
        return try measure()!
    }

    /// Runs worker `index`'s share of a multi-process run (the clients i with i mod N == index), talking to the
    /// coordinating process in lines on stdin and stdout.
    public func work(as index: Int) throws(LoadError) {
        try validatePlan()
        _ = try LoadRun(plan, worker: index).measure()
    }

    private func validatePlan() throws(LoadError) {
        do {
            try plan.validate()
        } catch {
            throw .invalidPlan(error)
        }
    }

    /// Opens this process's clients, runs the scenario and counts; returns the report, or nil in a worker (which
    /// sends its tally to its coordinator instead).
    private func measure() throws(LoadError) -> LoadReport? {
        let shards = try (0..<plan.threads).map { _ throws(LoadError) in
            try LoadShard(
                actionJSON: plan.actionJSON!, burstWindow: plan.scenario == .burst ? plan.window : 0,
                sendsPresence: plan.scenario == .presence,
                trustedCertificatesFile: plan.trustedCertificatesFile, eventLoop: plan.eventLoop,
                collectInterval: plan.collectInterval, layout: plan.layout)
        }
        defer { for shard in shards { shard.client.shutdown() } }
        let progress = LoadProgress(
            shards: shards, clients: plan.clients, enabled: worker == nil && isatty(STDERR_FILENO) == 1)
        let rssBefore = worker == nil ? plan.serverPID.flatMap(Self.residentKiB) : nil

        try open(shards: shards, headers: plan.layout.headers(clients: plan.clients), progress: progress)
        try setUp(shards: shards, progress: progress)
        let httpWriters = try openHTTPWriters()
        progress.httpWriters = httpWriters
        // Let the join presence messages drain before timing anything.
        LoadClock.sleep(until: LoadClock.now() + 1_000_000_000)

        for shard in shards { shard.onLoop { shard.resetCounts() } }
        let start: UInt64
        if worker != nil {
            Self.tell("ready")
            start = try UInt64(Self.hear("start")) ?? LoadClock.now()
        } else {
            start = LoadClock.now() + 10_000_000
        }
        let cpuStart = LoadClock.processCPUSeconds()
        let serverCPUStart = plan.serverPID.flatMap(Self.cpuSeconds)
        let end = start + plan.duration.nanoseconds
        var rssAfter: Int?
        var scheduled = 0
        switch plan.scenario {
        case .fanout:
            scheduled = runSchedule(shards: shards, start: start, progress: progress)
        case .presence:
            _ = runSchedule(shards: shards, start: start, progress: progress)
            // Nothing is answered: the last merged states leave within the server's presence interval.
            LoadClock.sleep(until: LoadClock.now() + Self.presenceSettle.nanoseconds)
        case .burst:
            LoadClock.sleep(until: start)
            for shard in shards { shard.client.loop.execute { shard.startBurst() } }
            progress.wait(until: end)
            for shard in shards { shard.running.store(false, ordering: .relaxed) }
        case .connect:
            progress.wait(until: end)
            rssAfter = plan.serverPID.flatMap(Self.residentKiB)
        case .http:
            try run(httpWriters, start: start, end: end, progress: progress)
        }
        if plan.scenario != .presence, plan.scenario != .connect || worker != nil {
            try waitForDrain(
                shards: shards, scheduled: scheduled, deadline: LoadClock.now() + plan.drain.nanoseconds,
                progress: progress, alsoAcked: httpWriters.lazy.compactMap { $0.versions.max() }.max())
        }
        let finish = LoadClock.now()
        let cpu = LoadClock.processCPUSeconds() - cpuStart
        let serverCPU = plan.serverPID.flatMap(Self.cpuSeconds).flatMap { end in serverCPUStart.map { end - $0 } }

        var acked: [LoadAudience: [Int]] = [:]
        for shard in shards { acked.merge(shard.onLoop { shard.ackedByAudience() }, uniquingKeysWith: +) }
        if !httpWriters.isEmpty { acked[.everyone, default: []] += httpWriters.flatMap(\.versions) }
        if worker != nil {
            Self.tell("acked " + Self.encode(acked[.everyone] ?? []))
            acked = [.everyone: try Self.decode([Int].self, Self.hear("acked"))]
        }
        let sorted = acked.mapValues { $0.sorted() }
        let summaries = shards.map { shard in shard.onLoop { shard.summary(acked: sorted) } }
        var tally = LoadTally(shards: shards, summaries: summaries, cpu: cpu)
        tally.add(httpWriters: httpWriters)
        for shard in shards { shard.client.loop.execute { shard.closeAll() } }
        if worker != nil {
            Self.tell("tally " + Self.encode(tally))
            return nil
        }
        var report = makeReport(tally, start: start, finish: finish, rssBefore: rssBefore, rssAfter: rssAfter)
        report.serverCPUSeconds = serverCPU
        return report
    }

    // MARK: - Phases

    /// Opens the sockets in batches of `batch`, each waiting for its snapshots (or failures).
    /// `headers`: each client's, when tokens are needed.
    private func open(shards: [LoadShard], headers: [[String: String]]?, progress: LoadProgress) throws(LoadError) {
        let mine = Array(stride(from: worker ?? 0, to: plan.clients, by: plan.processes))
        var issued = 0
        while issued < mine.count {
            let upper = min(issued + plan.batch, mine.count)
            for index in mine[issued..<upper] {
                let shard = shards[(index / plan.processes) % shards.count]
                let writer = plan.scenario.hasWebSocketWriters && index < plan.writers ? index : nil
                let view = plan.layout.view(client: index, clients: plan.clients)
                shard.client.connect(
                    to: plan.layout.url(plan.urls[index % plan.urls.count], client: index, clients: plan.clients),
                    headers: headers?[index] ?? [:], compression: index >= plan.clients - plan.deflate,
                    sourceAddress: plan.sourceAddresses > 0 ? "127.0.0.\(2 + index % plan.sourceAddresses)" : nil,
                    delegate: LoadConnection(shard: shard, writer: writer, index: index, view: view))
            }
            issued = upper
            var settled = 0
            var lastChange = LoadClock.now()
            while true {
                let now = LoadClock.now()
                let current = shards.reduce(0) {
                    $0 + $1.ready.load(ordering: .relaxed) + $1.failed.load(ordering: .relaxed)
                }
                if current >= issued { break }
                if current != settled {
                    settled = current
                    lastChange = now
                } else if now - lastChange > plan.openTimeout.nanoseconds {
                    throw .connect(
                        "\(issued - current) of \(issued) connections neither opened nor failed in --open-timeout "
                            + "\(plan.openTimeout.seconds) s")
                }
                progress.tick(now: now)
                LoadClock.sleep(until: now + 5_000_000)
            }
        }
        let ready = shards.reduce(0) { $0 + $1.ready.load(ordering: .relaxed) }
        if ready == 0 { throw .connect("no connection to \(plan.urls.joined(separator: ", ")) opened") }
    }

    /// The open-loop schedule: action `n` is due at `start + n / rate`, whatever the acks do; late sends keep
    /// their scheduled time in their id, so a stalled server shows up as latency, not as fewer samples.
    /// Returns how many actions it scheduled for this process's writers (with `--processes`, each process runs the
    /// whole schedule and sends the actions of the writers it opened).
    private func runSchedule(shards: [LoadShard], start: UInt64, progress: LoadProgress) -> Int {
        let total = Int((plan.duration.seconds * plan.rate).rounded())
        let interval = 1e9 / plan.rate
        var next = 0
        var mine = 0
        while next < total {
            let now = LoadClock.now()
            var due = [[(writer: Int, scheduledNanos: UInt64)]](repeating: [], count: shards.count)
            while next < total {
                let scheduled = start + UInt64(Double(next) * interval)
                if scheduled > now { break }
                let writer = next % plan.writers
                if writer % plan.processes == (worker ?? 0) {
                    due[(writer / plan.processes) % shards.count].append((writer, scheduled))
                    mine += 1
                }
                next += 1
            }
            for (index, sends) in due.enumerated() where !sends.isEmpty {
                let shard = shards[index]
                shard.client.loop.execute { shard.send(sends) }
            }
            progress.tick(now: now)
            if next < total {
                let scheduled = start + UInt64(Double(next) * interval)
                LoadClock.sleep(until: min(scheduled, progress.nextTick))
            }
        }
        return mine
    }

    /// Waits until every action scheduled was sent (or found no writer), every action sent is answered, and every
    /// open client has the last acked version (with `--processes`, the highest any process saw acked; `alsoAcked`:
    /// the highest version acked outside the shards, by HTTP writers).
    private func waitForDrain(
        shards: [LoadShard], scheduled: Int, deadline: UInt64, progress: LoadProgress, alsoAcked: Int? = nil
    ) throws(LoadError) {
        while LoadClock.now() < deadline {
            let sent = shards.reduce(0) { $0 + $1.sent.load(ordering: .relaxed) }
            let answered = shards.reduce(0) {
                $0 + $1.acks.load(ordering: .relaxed) + $1.errors.load(ordering: .relaxed)
            }
            let unsent = shards.reduce(0) { $0 + $1.unsent.load(ordering: .relaxed) }
            if sent + unsent >= scheduled, answered >= sent { break }
            progress.tick(now: LoadClock.now())
            LoadClock.sleep(until: LoadClock.now() + 20_000_000)
        }
        var highest: [LoadAudience: Int] = [:]
        for shard in shards { highest.merge(shard.onLoop { shard.highestAckedByAudience() }, uniquingKeysWith: max) }
        if let alsoAcked { highest[.everyone] = max(highest[.everyone] ?? 0, alsoAcked) }
        if worker != nil {
            Self.tell("highest \(highest[.everyone] ?? 0)")
            highest = [.everyone: Int(try Self.hear("highest")) ?? 0]
        }
        let snapshot = highest
        while true {
            let now = LoadClock.now()
            if shards.allSatisfy({ shard in shard.onLoop { shard.behind(highest: snapshot) } == 0 }) { return }
            if now >= deadline { return }
            progress.tick(now: now)
            LoadClock.sleep(until: now + 20_000_000)
        }
    }

    /// The report of a run from what every process counted.
    func makeReport(_ tally: LoadTally, start: UInt64, finish: UInt64, rssBefore: Int?, rssAfter: Int?) -> LoadReport {
        func perSecond(_ count: Int, until last: UInt64) -> Double {
            last > start && count > 0 ? Double(count) / (Double(last - start) / 1e9) : 0
        }
        var report = LoadReport(
            scenario: plan.scenario.rawValue,
            url: plan.urls.joined(separator: " "),
            clients: plan.clients,
            connected: tally.connected,
            connectFailures: tally.connectFailures,
            closedByServer: tally.closedByServer,
            writers: plan.scenario == .connect ? 0 : plan.writers,
            offeredRate: plan.scenario == .fanout ? plan.rate : 0,
            durationSeconds: Double(finish - start) / 1e9,
            sent: tally.sent,
            unsent: tally.unsent,
            acked: tally.acked,
            errors: tally.errors,
            actionsPerSecond: perSecond(tally.acked, until: tally.lastAckNanos),
            deliveries: tally.deliveries,
            receivedBytes: tally.receivedBytes,
            deliveriesPerSecond: perSecond(tally.deliveries, until: tally.lastDeliveryNanos),
            latencyMs: Self.latency(of: tally.histogram),
            requestLatencyMs: tally.requestHistogram.map { Self.latency(of: $0) },
            gaps: tally.gaps,
            missing: tally.missing,
            snapshots: tally.snapshots,
            resyncedClients: tally.resyncedClients,
            generatorCPUSeconds: tally.generatorCPUSeconds,
            serverRSSBeforeKiB: rssBefore,
            serverRSSAfterKiB: rssAfter,
            serverRSSPerConnectionBytes: nil,
            serverCPUSeconds: nil,
            firstError: tally.firstError,
            passed: false
        )
        if let rssBefore, let rssAfter, tally.connected > 0 {
            report.serverRSSPerConnectionBytes = (rssAfter - rssBefore) * 1024 / tally.connected
        }
        report.passed =
            report.connectFailures == 0 && report.closedByServer == 0 && report.gaps == 0
            && report.missing == 0
            && (plan.scenario == .connect || (report.unsent == 0 && report.errors == 0
                && (plan.scenario == .presence || report.acked == report.sent)))
        return report
    }

    // MARK: - Helpers

    /// How long a presence run waits after its last send: longer than the server's default presence interval, so
    /// the last merged states are read before the counts are taken.
    static let presenceSettle = Duration.milliseconds(500)

    /// The percentiles of `histogram` (µs) in milliseconds.
    static func latency(of histogram: Histogram<UInt64>) -> LoadReport.Latency {
        func millis(_ percentile: Double) -> Double {
            histogram.totalCount == 0 ? 0 : Double(histogram.valueAtPercentile(percentile)) / 1000
        }
        return .init(
            p50: millis(50), p90: millis(90), p99: millis(99), p999: millis(99.9),
            max: Double(histogram.max) / 1000, count: histogram.totalCount)
    }

    /// User plus system CPU time of a local process in seconds, from /proc/PID/stat.
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after the name start at the third (state); utime and stime are the 14th and 15th.
        let fields = stat[stat.index(after: afterName)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// VmRSS of a local process in KiB, from /proc/PID/status.
    static func residentKiB(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }
}
