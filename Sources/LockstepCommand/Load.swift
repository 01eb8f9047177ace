import ArgumentParser
import Foundation
import Histogram
import LockstepTransport
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `lockstep load`: drives thousands of WebSocket clients against one room of a local server and reports fan-out
/// throughput, delivery latency and integrity (no gap, nothing lost). Exits 1 when the run measured a failure.
struct Load: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load-test a local server: N clients in one room, W writers, latency of every delivery.",
        discussion: """
            Scenarios: fanout (W writers send at a fixed total --rate on an open-loop schedule; every client \
            checks contiguous versions and times each patch from its scheduled send), connect (open and hold \
            --clients sockets; with --server-pid, the server's RSS per connection), burst (each writer keeps \
            --window actions in flight; the highest throughput). Traffic goes only to loopback addresses.

            \(LoadReport.fieldHelp)
            """
    )

    @Option(
        help: """
            Room URL on a loopback address (127.0.0.0/8, localhost or [::1]); repeat it for servers sharing a \
            database: clients take the URLs in turn, writers first.
            """)
    var url = ["ws://127.0.0.1:8080/rooms/bench"]

    @Option(help: "WebSocket clients to open in the room.")
    var clients = 1000

    @Option(help: "Clients that also send actions (the first ones opened).")
    var writers = 1

    @Option(help: "Clients that offer permessage-deflate (the last ones opened); the others get plain frames.")
    var deflate = 0

    @Option(help: "Fanout: total actions per second across all writers.")
    var rate: Double = 100

    @Option(help: "How long writers send (fanout, burst) or sockets are held (connect).")
    var duration = LoadDuration(argument: "30s")!

    @Option(help: "The server's --app: picks the action writers send (counter, json, todos).")
    var app = "counter"

    @Option(help: "fanout, connect or burst.")
    var scenario: LoadScenario = .fanout

    @Option(help: "Burst: actions each writer keeps in flight.")
    var window = 16

    @Option(help: "Sockets opened at a time; each batch waits for its snapshots.")
    var batch = 200

    @Option(
        help: """
            While opening: how long no socket may open or fail before the run gives up (raise it when the machine \
            is busy and many sockets are opened at once).
            """)
    var openTimeout = LoadDuration(argument: "15s")!

    @Option(help: "Client event loops (libwebsockets contexts, one thread each).")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(
        help: """
            How each client loop waits for its sockets: poll, or epoll for thousands of mostly idle sockets per \
            loop (as the server's --event-loop).
            """)
    var eventLoop = EventLoopBackend.poll

    @Option(
        help: """
            With --event-loop epoll: how long each pass first waits for more sockets to become ready, so that one \
            pass reads many (fewer wake-ups for the generator and the server); adds at most this to latencies. 0: \
            read each at once.
            """)
    var collectInterval = LoadDuration(argument: "1ms")!

    @Option(help: "After sending stops: how long to wait for every ack and patch.")
    var drain = LoadDuration(argument: "30s")!

    @Option(help: "A PEM file of certificates to trust for wss:// besides the system's (e.g. a self-signed one).")
    var caFile: String?

    @Option(
        help: "The local server's process id: its CPU over the timed part and (connect) its RSS, from /proc.")
    var serverPid: Int32?

    @Flag(help: "Print one JSON object instead of the table.")
    var json = false

    @Option(
        help: """
            Generator processes: client i is opened by process i mod N (each with --threads loops), so that no \
            process runs out of file descriptors; one merged report. Whole-room runs only (no --paths, \
            --private-part).
            """)
    var processes = 1

    @Option(
        help: """
            Bind client i to the loopback address 127.0.0.<2 + i mod K> before connecting: each source address has \
            its own ephemeral ports (about 28 000). 0: the system picks (127.0.0.1).
            """)
    var sourceAddresses = 0

    /// Set by the coordinating process on each of its `--processes` workers.
    @Option(help: .hidden)
    var worker: Int?

    @OptionGroup(title: "Views and private parts")
    var layout: LoadLayout

    func validate() throws {
        guard clients > 0 else { throw ValidationError("--clients must be positive") }
        guard (0...clients).contains(deflate) else { throw ValidationError("--deflate must be 0...--clients") }
        guard batch > 0, threads > 0, window > 0, processes > 0 else {
            throw ValidationError("--batch, --threads, --window and --processes must be positive")
        }
        guard (0...250).contains(sourceAddresses) else { throw ValidationError("--source-addresses must be 0...250") }
        if processes > 1, !layout.everyVersionReachesEveryone {
            throw ValidationError("--processes works with whole-room runs only (no --paths or --private-part)")
        }
        if let worker, !(0..<processes).contains(worker) { throw ValidationError("--worker must be 0..<--processes") }
        if scenario != .connect {
            guard (1...clients).contains(writers) else { throw ValidationError("--writers must be 1...--clients") }
        }
        if scenario == .fanout {
            guard rate > 0, rate.isFinite else { throw ValidationError("--rate must be a positive number") }
        }
        guard Self.action(for: app) != nil else {
            throw ValidationError("unknown --app '\(app)'; choose counter, json or todos")
        }
        try layout.validate(app: app, clients: clients)
        for url in url {
            guard let host = Self.host(of: url) else {
                throw ValidationError("--url must look like ws://127.0.0.1:PORT/rooms/ROOM (or wss://)")
            }
            guard host == "localhost" || host == "[::1]" || host.hasPrefix("127.") else {
                throw ValidationError(
                    "--url must point at a loopback address (127.x.x.x, localhost, [::1]), not '\(host)'")
            }
            if sourceAddresses > 0, !host.hasPrefix("127.") {
                throw ValidationError("--source-addresses needs --url on 127.x.x.x, not '\(host)'")
            }
        }
    }

    func run() throws {
        if processes > 1, worker == nil { return try coordinateProcesses() }
        let shards = try (0..<threads).map { _ throws(LoadError) in
            try LoadShard(
                actionJSON: Self.action(for: app)!, burstWindow: scenario == .burst ? window : 0,
                trustedCertificatesFile: caFile, eventLoop: eventLoop,
                collectInterval: .nanoseconds(collectInterval.nanoseconds), layout: layout)
        }
        defer { for shard in shards { shard.client.shutdown() } }
        let progress = LoadProgress(
            shards: shards, clients: clients, enabled: worker == nil && isatty(STDERR_FILENO) == 1)
        let rssBefore = worker == nil ? serverPid.flatMap(Self.residentKiB) : nil

        try open(shards: shards, headers: layout.headers(clients: clients), progress: progress)
        try setUp(shards: shards, progress: progress)
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
        let serverCPUStart = serverPid.flatMap(Self.cpuSeconds)
        let end = start + duration.nanoseconds
        var rssAfter: Int?
        var scheduled = 0
        switch scenario {
        case .fanout:
            scheduled = runSchedule(shards: shards, start: start, progress: progress)
        case .burst:
            LoadClock.sleep(until: start)
            for shard in shards { shard.client.loop.execute { shard.startBurst() } }
            progress.wait(until: end)
            for shard in shards { shard.running.store(false, ordering: .relaxed) }
        case .connect:
            progress.wait(until: end)
            rssAfter = serverPid.flatMap(Self.residentKiB)
        }
        if scenario != .connect || worker != nil {
            try waitForDrain(
                shards: shards, scheduled: scheduled, deadline: LoadClock.now() + drain.nanoseconds, progress: progress
            )
        }
        let finish = LoadClock.now()
        let cpu = LoadClock.processCPUSeconds() - cpuStart
        let serverCPU = serverPid.flatMap(Self.cpuSeconds).flatMap { end in serverCPUStart.map { end - $0 } }

        var acked: [LoadAudience: [Int]] = [:]
        for shard in shards { acked.merge(shard.onLoop { shard.ackedByAudience() }, uniquingKeysWith: +) }
        if worker != nil {
            Self.tell("acked " + Self.encode(acked[.everyone] ?? []))
            acked = [.everyone: try Self.decode([Int].self, Self.hear("acked"))]
        }
        let sorted = acked.mapValues { $0.sorted() }
        let summaries = shards.map { shard in shard.onLoop { shard.summary(acked: sorted) } }
        let tally = LoadTally(shards: shards, summaries: summaries, cpu: cpu)
        for shard in shards { shard.client.loop.execute { shard.closeAll() } }
        if worker != nil {
            Self.tell("tally " + Self.encode(tally))
            return
        }
        var report = makeReport(tally, start: start, finish: finish, rssBefore: rssBefore, rssAfter: rssAfter)
        report.serverCPUSeconds = serverCPU
        print(json ? report.json() : report.table())
        if !report.passed { throw ExitCode(1) }
    }

    // MARK: - Phases

    /// Opens the sockets in batches of `batch`, each waiting for its snapshots (or failures).
    /// `headers`: each client's, when tokens are needed.
    private func open(shards: [LoadShard], headers: [[String: String]]?, progress: LoadProgress) throws(LoadError) {
        let mine = Array(stride(from: worker ?? 0, to: clients, by: processes))
        var issued = 0
        while issued < mine.count {
            let upper = min(issued + batch, mine.count)
            for index in mine[issued..<upper] {
                let shard = shards[(index / processes) % shards.count]
                let writer = scenario != .connect && index < writers ? index : nil
                let view = layout.view(client: index, clients: clients)
                shard.client.connect(
                    to: layout.url(url[index % url.count], client: index, clients: clients),
                    headers: headers?[index] ?? [:], compression: index >= clients - deflate,
                    sourceAddress: sourceAddresses > 0 ? "127.0.0.\(2 + index % sourceAddresses)" : nil,
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
                } else if now - lastChange > openTimeout.nanoseconds {
                    throw .connect(
                        "\(issued - current) of \(issued) connections neither opened nor failed in --open-timeout "
                            + "\(openTimeout.seconds) s")
                }
                progress.tick(now: now)
                LoadClock.sleep(until: now + 5_000_000)
            }
        }
        let ready = shards.reduce(0) { $0 + $1.ready.load(ordering: .relaxed) }
        if ready == 0 { throw .connect("no connection to \(url.joined(separator: ", ")) opened") }
    }

    /// The open-loop schedule: action `n` is due at `start + n / rate`, whatever the acks do; late sends keep
    /// their scheduled time in their id, so a stalled server shows up as latency, not as fewer samples.
    /// Returns how many actions it scheduled for this process's writers (with `--processes`, each process runs the
    /// whole schedule and sends the actions of the writers it opened).
    private func runSchedule(shards: [LoadShard], start: UInt64, progress: LoadProgress) -> Int {
        let total = Int((duration.seconds * rate).rounded())
        let interval = 1e9 / rate
        var next = 0
        var mine = 0
        while next < total {
            let now = LoadClock.now()
            var due = [[(writer: Int, scheduledNanos: UInt64)]](repeating: [], count: shards.count)
            while next < total {
                let scheduled = start + UInt64(Double(next) * interval)
                if scheduled > now { break }
                let writer = next % writers
                if writer % processes == (worker ?? 0) {
                    due[(writer / processes) % shards.count].append((writer, scheduled))
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
    /// open client has the last acked version (with `--processes`, the highest any process saw acked).
    private func waitForDrain(
        shards: [LoadShard], scheduled: Int, deadline: UInt64, progress: LoadProgress
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
        let histogram = tally.histogram
        func millis(_ percentile: Double) -> Double {
            histogram.totalCount == 0 ? 0 : Double(histogram.valueAtPercentile(percentile)) / 1000
        }
        func perSecond(_ count: Int, until last: UInt64) -> Double {
            last > start && count > 0 ? Double(count) / (Double(last - start) / 1e9) : 0
        }
        var report = LoadReport(
            scenario: scenario.rawValue,
            url: url.joined(separator: " "),
            clients: clients,
            connected: tally.connected,
            connectFailures: tally.connectFailures,
            closedByServer: tally.closedByServer,
            writers: scenario == .connect ? 0 : writers,
            offeredRate: scenario == .fanout ? rate : 0,
            durationSeconds: Double(finish - start) / 1e9,
            sent: tally.sent,
            unsent: tally.unsent,
            acked: tally.acked,
            errors: tally.errors,
            actionsPerSecond: perSecond(tally.acked, until: tally.lastAckNanos),
            deliveries: tally.deliveries,
            deliveriesPerSecond: perSecond(tally.deliveries, until: tally.lastDeliveryNanos),
            latencyMs: .init(
                p50: millis(50), p90: millis(90), p99: millis(99), p999: millis(99.9),
                max: Double(histogram.max) / 1000, count: histogram.totalCount
            ),
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
            && (scenario == .connect || (report.unsent == 0 && report.errors == 0 && report.acked == report.sent))
        return report
    }

    // MARK: - Helpers

    /// The action each app's writers send: one that always changes the state, so every ack is one version.
    /// `$ID` stands for the action's id (the json app needs a new value each time to change the state).
    private static func action(for app: String) -> String? {
        switch app {
        case "counter": #"{"type":"increment"}"#
        case "json": #"{"type":"patch","ops":[{"op":"add","path":"$PATH","value":"$ID"}]}"#
        case "todos": #"{"type":"add","title":"load"}"#
        default: nil
        }
    }

    private static func host(of url: String) -> String? {
        guard let scheme = ["ws://", "wss://"].first(where: { url.hasPrefix($0) }) else { return nil }
        let rest = url.dropFirst(scheme.count)
        if rest.hasPrefix("[") { return rest.firstIndex(of: "]").map { String(rest[...$0]) } }
        let host = rest.prefix { $0 != ":" && $0 != "/" }
        return host.isEmpty ? nil : String(host)
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
