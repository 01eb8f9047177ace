import Foundation
public import LockstepTransport

/// Every setting of one load run, with `lockstep load`'s defaults: where the clients connect, how many there are,
/// what the writers send and for how long. ``LoadRun`` runs it.
///
/// ```swift
/// var plan = LoadPlan()
/// plan.urls = ["ws://127.0.0.1:8080/rooms/bench"]
/// plan.clients = 5_000
/// plan.rate = 1_000
/// try plan.validate()
/// let report = try LoadRun(plan).report()
/// ```
public struct LoadPlan: Sendable {
    /// Room URLs on loopback addresses; clients take them in turn, writers first (servers sharing a database).
    public var urls = ["ws://127.0.0.1:8080/rooms/bench"]
    /// WebSocket clients to open in the room.
    public var clients = 1000
    /// Clients that also send actions: the first ones opened. With ``LoadScenario/http``: HTTP writers, each on a
    /// connection of its own besides the clients, which then all read.
    public var writers = 1
    /// Clients that offer permessage-deflate: the last ones opened.
    public var deflate = 0
    /// Fanout: total actions per second across all writers.
    public var rate: Double = 100
    /// How long writers send (fanout, burst, http) or sockets are held (connect).
    public var duration: Duration = .seconds(30)
    /// The server's app (`counter`, `json` or `todos`): it picks the action writers send.
    public var app = "counter"
    /// What the run measures.
    public var scenario = LoadScenario.fanout
    /// Burst: actions each writer keeps in flight.
    public var window = 16
    /// HTTP: how long a writer waits to connect, to send a request, and for each answer, before it counts an error.
    public var requestTimeout: Duration = .seconds(10)
    /// Sockets opened at a time; each batch waits for its snapshots.
    public var batch = 200
    /// While opening: how long no socket may open or fail before the run gives up.
    public var openTimeout: Duration = .seconds(15)
    /// Client event loops (libwebsockets contexts, one thread each).
    public var threads = ProcessInfo.processInfo.activeProcessorCount
    /// How each client loop waits for its sockets.
    public var eventLoop = EventLoopBackend.poll
    /// With `.epoll`: how long each pass first waits for more sockets to become ready, so that one
    /// pass reads many; adds at most this to latencies.
    public var collectInterval: Duration = .milliseconds(1)
    /// After sending stops: how long to wait for every ack and patch.
    public var drain: Duration = .seconds(30)
    /// A PEM file of certificates to trust for `wss://` besides the system's.
    public var trustedCertificatesFile: String?
    /// The local server's process id: its CPU over the timed part and (connect) its RSS, read from `/proc`.
    public var serverPID: Int32?
    /// Generator processes: client i is opened by process i mod N, so that no process runs out of file descriptors.
    /// Whole-room runs only; needs ``LoadPlan/workerArguments``.
    public var processes = 1
    /// Bind client i to `127.0.0.<2 + i mod K>`: each source address has its own ephemeral ports. 0: the system
    /// picks.
    public var sourceAddresses = 0
    /// What each client follows and each action changes.
    public var layout = LoadLayout()
    /// With ``LoadPlan/processes`` above 1: the arguments that make this executable (`/proc/self/exe`) call
    /// ``LoadRun/work(as:)`` with this plan for worker `index`.
    public var workerArguments: (@Sendable (_ index: Int) -> [String])?

    /// A plan with `lockstep load`'s defaults.
    public init() {}

    /// Checks the settings against each other; the error names the `lockstep load` option at fault.
    public func validate() throws(LoadPlanError) {
        try layout.validate()
        guard clients > 0 else { throw LoadPlanError("--clients must be positive") }
        guard (0...clients).contains(deflate) else { throw LoadPlanError("--deflate must be 0...--clients") }
        guard batch > 0, threads > 0, window > 0, processes > 0 else {
            throw LoadPlanError("--batch, --threads, --window and --processes must be positive")
        }
        guard (0...250).contains(sourceAddresses) else { throw LoadPlanError("--source-addresses must be 0...250") }
        if processes > 1, !layout.everyVersionReachesEveryone {
            throw LoadPlanError("--processes works with whole-room runs only (no --paths or --private-part)")
        }
        if processes > 1, workerArguments == nil {
            throw LoadPlanError("--processes needs a way to start the worker processes (workerArguments)")
        }
        if scenario == .http {
            try validateHTTP()
        } else if scenario != .connect {
            guard (1...clients).contains(writers) else { throw LoadPlanError("--writers must be 1...--clients") }
        }
        if scenario == .presence, processes > 1 {
            throw LoadPlanError("--scenario presence runs in one process (no --processes)")
        }
        if scenario == .fanout || scenario == .presence {
            guard rate > 0, rate.isFinite else { throw LoadPlanError("--rate must be a positive number") }
        }
        guard actionJSON != nil else { throw LoadPlanError("unknown --app '\(app)'; choose counter, json or todos") }
        try layout.validate(app: app, clients: clients)
        for url in urls {
            guard let host = Self.host(of: url) else {
                throw LoadPlanError("--url must look like ws://127.0.0.1:PORT/rooms/ROOM (or wss://)")
            }
            guard host == "localhost" || host == "[::1]" || host.hasPrefix("127.") else {
                throw LoadPlanError(
                    "--url must point at a loopback address (127.x.x.x, localhost, [::1]), not '\(host)'")
            }
            if sourceAddresses > 0, !host.hasPrefix("127.") {
                throw LoadPlanError("--source-addresses needs --url on 127.x.x.x, not '\(host)'")
            }
        }
    }

    /// What ``LoadScenario/http`` needs besides the rest: plain `ws://` URLs (the writers post to their rooms over
    /// plain HTTP), one process, the whole room.
    private func validateHTTP() throws(LoadPlanError) {
        guard writers > 0 else { throw LoadPlanError("--writers must be positive") }
        guard requestTimeout > .zero else { throw LoadPlanError("--request-timeout must be positive") }
        guard processes == 1 else { throw LoadPlanError("--scenario http runs in one process (no --processes)") }
        guard layout.everyVersionReachesEveryone else {
            throw LoadPlanError("--scenario http works with whole-room runs only (no --paths or --private-part)")
        }
        for url in urls where LoadHTTPTarget(url: url) == nil {
            throw LoadPlanError("--scenario http posts over plain HTTP: --url must be ws://HOST:PORT/rooms/ROOM")
        }
    }

    /// The action the app's writers send: one that always changes the state, so every ack is one version.
    /// `$ID` stands for the action's id (the json app needs a new value each time to change the state).
    var actionJSON: String? {
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
}
