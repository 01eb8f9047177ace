public import ArgumentParser
import Foundation
public import LockstepLoad
import LockstepTransport

/// `lockstep load`: drives thousands of WebSocket clients against one room of a local server and reports fan-out
/// throughput, delivery latency and integrity (no gap, nothing lost). Exits 1 when the run measured a failure.
///
/// The generator is `LockstepLoad`'s `LoadRun`; this command maps its options to a `LoadPlan` and prints the report.
struct GenerateLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Load-test a local server: N clients in one room, W writers, latency of every delivery.",
        discussion: """
            Scenarios: fanout (W writers send at a fixed total --rate on an open-loop schedule; every client \
            checks contiguous versions and times each patch from its scheduled send), connect (open and hold \
            --clients sockets; with --server-pid, the server's RSS per connection), burst (each writer keeps \
            --window actions in flight; the highest throughput), http (--writers POST one action at a time each \
            to the room over a keep-alive HTTP/1.1 connection of its own, for --duration; every client reads and \
            checks each patch; requests/s and each request's latency; with a secret, writer i's token has sub h<i>), \
            presence (W writers send presence states, a cursor each, at a total --rate on the fanout's schedule; \
            every client reads the merged changes, counted as deliveries; nothing is acknowledged: compare the \
            server CPU with fanout's). Traffic goes only to loopback addresses.

            \(fieldHelp)
            """
    )

    /// The report's JSON fields, for `--help`.
    private static let fieldHelp = """
        --json prints one object: scenario, url, clients, connected, connectFailures, closedByServer, writers, \
        offeredRate (actions/s; 0 for burst/connect), durationSeconds, sent, unsent (scheduled while the writer was \
        not connected), acked, errors (error messages received), actionsPerSecond (acked / time to last ack), \
        deliveries (patches received by all clients; presence: presence messages), receivedBytes (text received by \
        all clients in the timed part), deliveriesPerSecond (deliveries / time to last delivery), \
        latencyMs {p50, p90, p99, p999, max, count} (scheduled send to receipt, every delivery), requestLatencyMs \
        (http: the same of each request, sent to answered), gaps (patches not \
        exactly version+1), missing (acked changes some open client neither received nor skipped via a snapshot), \
        snapshots (resync snapshots after the first), resyncedClients, generatorCPUSeconds (getrusage, whole run), \
        serverRSSBeforeKiB/serverRSSAfterKiB/serverRSSPerConnectionBytes (connect with --server-pid), \
        serverCPUSeconds (with --server-pid: its CPU from start to end of the timed part), firstError, passed.
        """

    @Option(
        help: """
            Room URL on a loopback address (127.0.0.0/8, localhost or [::1]); repeat it for servers sharing a \
            database: clients take the URLs in turn, writers first.
            """)
    var url = ["ws://127.0.0.1:8080/rooms/bench"]

    @Option(help: "WebSocket clients to open in the room.")
    var clients = 1000

    @Option(
        help: "Clients that also send actions (the first ones opened); http: HTTP writers, besides the clients.")
    var writers = 1

    @Option(help: "Clients that offer permessage-deflate (the last ones opened); the others get plain frames.")
    var deflate = 0

    @Option(help: "Fanout: total actions per second across all writers.")
    var rate: Double = 100

    @Option(help: "How long writers send (fanout, burst, http, presence) or sockets are held (connect).")
    var duration = Interval(argument: "30s")!

    @Option(help: "The server's --app: picks the action writers send (counter, json, todos).")
    var app = "counter"

    @Option(help: "fanout, connect, burst, http or presence (writers send presence states at --rate, not actions).")
    var scenario: LoadScenario = .fanout

    @Option(help: "Burst: actions each writer keeps in flight.")
    var window = 16

    @Option(
        help: """
            Http: how long a writer waits to connect, to send a request and for each answer before it counts an \
            error.
            """)
    var requestTimeout = Interval(argument: "10s")!

    @Option(help: "Sockets opened at a time; each batch waits for its snapshots.")
    var batch = 200

    @Option(
        help: """
            While opening: how long no socket may open or fail before the run gives up (raise it when the machine \
            is busy and many sockets are opened at once).
            """)
    var openTimeout = Interval(argument: "15s")!

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
    var collectInterval = Interval(argument: "1ms")!

    @Option(help: "After sending stops: how long to wait for every ack and patch.")
    var drain = Interval(argument: "30s")!

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
    var layout: LayoutOptions

    func validate() throws {
        do {
            try plan.validate()
        } catch {
            throw ValidationError(error.description)
        }
        if let worker, !(0..<processes).contains(worker) { throw ValidationError("--worker must be 0..<--processes") }
    }

    func run() throws {
        let run = LoadRun(plan)
        if let worker { return try run.work(as: worker) }
        let report = try run.report()
        print(json ? report.json() : report.table())
        if !report.passed { throw ExitCode(1) }
    }

    /// The run these options describe; a worker process is this executable with the same arguments and `--worker`.
    var plan: LoadPlan {
        var plan = LoadPlan()
        plan.urls = url
        plan.app = app
        plan.scenario = scenario
        plan.rate = rate
        let counts: [(WritableKeyPath<LoadPlan, Int>, Int)] = [
            (\.clients, clients), (\.writers, writers), (\.deflate, deflate), (\.window, window), (\.batch, batch),
            (\.threads, threads), (\.processes, processes), (\.sourceAddresses, sourceAddresses),
        ]
        for (setting, value) in counts { plan[keyPath: setting] = value }
        let durations: [(WritableKeyPath<LoadPlan, Duration>, Interval)] = [
            (\.duration, duration), (\.openTimeout, openTimeout), (\.collectInterval, collectInterval),
            (\.drain, drain), (\.requestTimeout, requestTimeout),
        ]
        for (setting, value) in durations { plan[keyPath: setting] = value.duration }
        plan.eventLoop = eventLoop
        plan.trustedCertificatesFile = caFile
        plan.serverPID = serverPid
        plan.layout = layout.layout
        let arguments = Array(CommandLine.arguments.dropFirst())
        plan.workerArguments = { index in arguments + ["--worker", "\(index)"] }
        return plan
    }
}

/// `--scenario fanout`, `connect`, `burst`, `http` or `presence`.
extension LoadScenario: ExpressibleByArgument {}
