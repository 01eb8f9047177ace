import Foundation
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepTestSupport
import Synchronization
import Testing

/// A bounded soak of three `lockstep serve --postgres` processes on one throwaway PostgreSQL: clients write numbered
/// keys into a few `json` rooms while, at random, a node is killed with -9 and started again on its port, every
/// database connection is terminated, or PostgreSQL restarts. At the end: one order of patches per room across
/// clients, every acknowledged key in the room exactly once, every server showing the same room and epoch, and no
/// client that ever skipped a version or went back in time.
///
/// Each room has two SDK clients (`RoomClient`, session names, its outbox), each pinned to one server (the SDK takes
/// one URL: when that server dies its clients wait for it to come back), and two raw-socket clients with sessions
/// and `seq` that move to the next server whenever their connection ends, resuming with `since=` and `epoch=`.
///
/// 30 s of chaos by default; `LOCKSTEP_SOAK_SECONDS` raises it (at most 300); `LOCKSTEP_SOAK_SEED` replays a run.
@Suite(.timeLimit(.minutes(10)), .serialized, .postgresExclusive) struct ClusterSoakTests {
    static let rooms = (0..<3).map { "soak-\($0)" }

    static var seconds: Int {
        let asked = ProcessInfo.processInfo.environment["LOCKSTEP_SOAK_SECONDS"].flatMap { Int($0) } ?? 30
        return min(max(asked, 1), 300)
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["LOCKSTEP_SOAK_SEED"].flatMap { UInt64($0) } ?? .random(in: 1 ... .max)
    }

    /// The action that adds `key` to the room and appends it to `/log`: a request applied twice shows twice there.
    static func action(_ key: String, _ n: Int) -> JSON {
        [
            "type": "patch",
            "ops": [
                ["op": "add", "path": .string("/\(key)"), "value": .int(n)],
                ["op": "add", "path": "/log/-", "value": .string(key)],
            ],
        ]
    }

    @Test func clientsWritingThroughKillsDroppedConnectionsAndDatabaseRestartsLoseAndRepeatNothing() async throws {
        let seconds = Self.seconds
        let seed = Self.seed
        print("cluster soak: \(seconds) s of chaos, seed \(seed) (LOCKSTEP_SOAK_SEED=\(seed) replays the choices)")
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        let arguments = [
            "--app", "json", "--postgres", postgres.url, "--postgres-timeout", "2s", "--peer-lifetime", "3s",
            "--rate-limit", "0", "--log-level", "critical",
        ]
        var nodes: [NodeProcess] = []
        defer { for node in nodes { node.stop() } }
        for _ in 0..<3 { nodes.append(try await NodeProcess.start(arguments: arguments)) }
        let ports = nodes.map(\.port)

        // Each room's history begins with `/log`, written through the first server before anyone else joins.
        for room in Self.rooms {
            let creator = try await TestClient.connect(port: ports[0], room: room, using: sharedTransport)
            _ = try await creator.nextJSON(type: "snapshot")
            let ops = #"[{"op":"add","path":"/log","value":[]}]"#
            creator.sendRaw(#"{"type":"action","id":"log","action":{"type":"patch","ops":\#(ops)}}"#)
            #expect(try await creator.nextJSON(type: "ack")["version"] == 1)
            creator.close()
        }

        let ledger = SoakLedger()
        let retry = ReconnectPolicy(initialDelay: .milliseconds(50), maxDelay: .milliseconds(500))
        var sdkWriters: [SoakSDKWriter] = []
        var rawWriters: [FailoverWriter] = []
        defer {
            for writer in sdkWriters { Task { await writer.client.close() } }
        }
        for (index, room) in Self.rooms.enumerated() {
            for n in 0..<2 {
                let name = "s\(index)\(n)"
                let client = try RoomClient(
                    url: "ws://127.0.0.1:\(ports[(index + n) % 3])/rooms/\(room)", name: name, session: "soak-\(name)",
                    reconnect: retry, transport: sharedTransport)
                try await client.connect()
                sdkWriters.append(SoakSDKWriter(name: name, room: room, client: client, ledger: ledger))
                rawWriters.append(
                    FailoverWriter(
                        name: "r\(index)\(n)", room: room, ports: ports, node: (index + n + 2) % 3, ledger: ledger))
            }
        }

        let stop = Flag()
        let chaosNodes = nodes
        let end = ContinuousClock.now + .seconds(seconds)
        let events = try await withThrowingTaskGroup(of: [String].self) { group in
            for writer in sdkWriters {
                group.addTask {
                    await writer.write(until: stop); return []
                }
            }
            for writer in rawWriters {
                group.addTask {
                    await writer.run(until: stop); return []
                }
            }
            group.addTask {
                defer { stop.set() }
                return try await Self.chaos(nodes: chaosNodes, postgres: postgres, until: end, seed: seed)
            }
            var events: [String] = []
            for try await finished in group { events += finished }
            return events
        }
        print("cluster soak: \(events.count) events: \(events.joined(separator: ", "))")
        let crashes = events.filter { $0.contains("crashed") }
        #expect(crashes.isEmpty, "a node ended by itself: \(crashes.joined(separator: ", "))")

        for name in Self.rooms {
            let sdk = sdkWriters.filter { $0.room == name }
            let raw = rawWriters.filter { $0.room == name }
            var acked: [String] = []
            var highest = 0
            for writer in sdk {
                acked += writer.acked
                highest = max(highest, writer.highestAck)
            }
            for writer in raw {
                acked += await writer.acked
                highest = max(highest, await writer.highestAck)
            }
            let room = try #require(try await Self.settled(name, ports: ports, atLeast: highest))
            let final = try #require(room["version"]?.intValue)
            let state = try #require(room["state"])
            print("cluster soak: \(name) at version \(final), \(acked.count) acknowledged keys")
            #expect(!acked.isEmpty)

            let log = state["log"]?.arrayValue?.compactMap(\.stringValue) ?? []
            var times: [String: Int] = [:]
            for key in log { times[key, default: 0] += 1 }
            let lost = acked.filter { times[$0] == nil }
            let repeated = times.filter { $0.value > 1 }.keys.sorted()
            #expect(lost.isEmpty, "\(lost.count) acknowledged keys are missing, e.g. \(lost.prefix(5))")
            #expect(repeated.isEmpty, "\(repeated.count) keys were applied more than once, e.g. \(repeated.prefix(5))")
            #expect(acked.allSatisfy { state[$0] != nil }, "every acknowledged key is a member of the state")

            for writer in sdk {
                #expect(try await writer.reach(final), "\(writer.name) reaches version \(final)")
                #expect(await writer.client.state == state, "\(writer.name) shows the room's state")
                #expect(await writer.client.epoch == room["epoch"]?.stringValue, "\(writer.name) follows the epoch")
            }
            for writer in raw {
                #expect(try await writer.reach(final) == state, "\(writer.name) shows the room's state")
                #expect(await writer.epoch == room["epoch"]?.stringValue, "\(writer.name) follows the room's epoch")
                await writer.close()
            }
        }
        for writer in sdkWriters { await writer.client.close() }
        let problems = ledger.problems
        #expect(problems.isEmpty, "\(problems.count) problems, e.g. \(problems.prefix(5).joined(separator: "; "))")
        print("cluster soak: \(ledger.versionsSeen) versions compared across clients")
    }

    /// Kills, terminated connections and database restarts, at random, until `end`; everything is up when it returns.
    static func chaos(
        nodes: [NodeProcess], postgres: PostgresServer, until end: ContinuousClock.Instant, seed: UInt64
    ) async throws -> [String] {
        var random = SplitMix64(seed: seed)
        var events: [String] = []
        while ContinuousClock.now < end {
            // The soak's schedule: faults at random times while the clients write.
            try await Task.sleep(for: .milliseconds(1_000 + Int(random.next() % 2_000)))
            // A node that ended by itself is a failure; it is started again so that its clients can finish.
            for (index, node) in nodes.enumerated() {
                guard let code = node.crashCode else { continue }
                events.append("node \(index) crashed (exit code \(code))")
                node.kill9()
                try await node.restart()
            }
            switch random.next() % 3 {
            case 0:
                let node = Int(random.next() % UInt64(nodes.count))
                nodes[node].kill9()
                try await Task.sleep(for: .milliseconds(200 + Int(random.next() % 1_000)))
                try await nodes[node].restart()
                events.append("kill -9 of node \(node)")
            case 1:
                try await offThePool { try postgres.terminateBackends() }
                events.append("connections terminated")
            default:
                try await offThePool { try postgres.restart() }
                events.append("PostgreSQL restarted")
            }
        }
        return events
    }

    /// The room as every server shows it once they all agree and it includes every acknowledged change; the servers'
    /// epochs must agree too.
    static func settled(_ name: String, ports: [Int], atLeast version: Int) async throws -> JSON? {
        var views: [JSON] = []
        for _ in 0..<300 {
            views = []
            for port in ports { views.append(try await HTTPGet(port: port, path: "/rooms/\(name)").json ?? .null) }
            let first = views[0]
            if let reached = first["version"]?.intValue, reached >= version,
                views.allSatisfy({ $0["version"] == first["version"] && $0["state"] == first["state"] })
            {
                #expect(views.allSatisfy { $0["epoch"] != nil && $0["epoch"] == first["epoch"] }, "one epoch per room")
                return first
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let versions = views.map { $0["version"] ?? .null }
        Issue.record("the servers do not agree on \(name) at version \(version) or later: \(versions)")
        return nil
    }
}

/// What every soak client saw: each room's patches by version, and every step that broke the rules.
final class SoakLedger: Sendable {
    struct Patch: Equatable, Sendable {
        let ops: JSONPatch
        let cause: Cause
        let undo: Int
        let redo: Int
    }

    private struct Seen {
        var patch: Patch
        /// The frame as a raw client parsed and wrote it again; nil when only SDK clients saw this version.
        var text: [UInt8]?
        var by: String
    }

    private struct Book {
        var patches: [String: [Int: Seen]] = [:]
        var problems: [String] = []
    }

    private let book = Mutex(Book())

    var problems: [String] { book.withLock { $0.problems } }
    var versionsSeen: Int { book.withLock { $0.patches.values.reduce(0) { $0 + $1.count } } }

    func problem(_ text: String) {
        book.withLock { $0.problems.append(text) }
    }

    /// Records that `client` applied `patch` as `version` of `room`; another client's different patch there is a
    /// problem: clients of one room see one order.
    func saw(_ patch: Patch, text: [UInt8]?, version: Int, room: String, by client: String) {
        book.withLock { book in
            guard let seen = book.patches[room]?[version] else {
                book.patches[room, default: [:]][version] = Seen(patch: patch, text: text, by: client)
                return
            }
            if seen.patch != patch {
                book.problems.append("\(room) version \(version): \(seen.by) and \(client) saw different patches")
            } else if let text, let other = seen.text, text != other {
                book.problems.append(
                    """
                    \(room) version \(version): \(seen.by) and \(client) got different bytes: \
                    \(String(decoding: other, as: UTF8.self)) and \(String(decoding: text, as: UTF8.self))
                    """)
            } else if seen.text == nil, let text {
                book.patches[room]?[version]?.text = text
            }
        }
    }
}

/// An SDK client writing numbered keys through its outbox, and a reader of its updates that checks the mirror's
/// version only goes forward: one patch at a time, or a snapshot that may jump ahead but never back.
final class SoakSDKWriter: Sendable {
    let name: String
    let room: String
    let client: RoomClient
    private let ledger: SoakLedger
    private let acknowledged = Mutex<(keys: [String], highest: Int)>(([], 0))
    private let observer: Task<Void, Never>

    init(name: String, room: String, client: RoomClient, ledger: SoakLedger) {
        self.name = name
        self.room = room
        self.client = client
        self.ledger = ledger
        observer = Task {
            var last: Int?
            for await update in client.updates {
                switch update.change {
                case .snapshot:
                    if let last, update.version < last {
                        ledger.problem("\(name): a snapshot at version \(update.version) after \(last): back in time")
                    }
                    last = update.version
                case .resumed:
                    if update.version != last {
                        ledger.problem("\(name): resumed at \(update.version), its mirror was at \(last ?? -1)")
                    }
                case .patch(let ops, let cause, _):
                    if let last, update.version != last + 1 {
                        ledger.problem("\(name): patch \(update.version) applied after version \(last)")
                    }
                    last = update.version
                    let patch = SoakLedger.Patch(ops: ops, cause: cause, undo: update.undoCount, redo: update.redoCount)
                    ledger.saw(patch, text: nil, version: update.version, room: room, by: name)
                default:
                    break
                }
            }
        }
    }

    deinit { observer.cancel() }

    var acked: [String] { acknowledged.withLock { $0.keys } }
    var highestAck: Int { acknowledged.withLock { $0.highest } }

    /// Sends key after key, each once its previous one is acknowledged, until `stop`. The client itself sends a
    /// request the server could not commit (`unavailable`) again, with its `seq`: every other outcome is a problem.
    func write(until stop: Flag) async {
        var n = 0
        while !stop.isSet {
            n += 1
            let key = "\(name)-\(n)"
            do {
                let version = try await client.send(action: ClusterSoakTests.action(key, n))
                acknowledged.withLock {
                    $0.keys.append(key)
                    $0.highest = max($0.highest, version)
                }
            } catch {
                ledger.problem("\(name): \(key) failed: \(error)")
                return
            }
        }
    }

    /// Whether the mirror reaches `version` within 30 s.
    func reach(_ version: Int) async throws -> Bool {
        for _ in 0..<300 {
            if await client.version >= version { return await client.version == version }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}

/// A client on raw sockets with a session and `seq`, writing numbered keys one at a time, that moves to the next
/// server whenever its connection ends and resumes there with `since=` and `epoch=`. The SDK takes a single URL,
/// so this is the client that fails over between servers; it also keeps each patch's text for the ledger.
actor FailoverWriter {
    nonisolated let name: String
    nonisolated let room: String
    private let ports: [Int]
    private let ledger: SoakLedger
    private var node: Int
    private var client: TestClient?
    private(set) var epoch: String?
    private var version: Int?
    private var state: JSON = .null
    private var seq = 0
    private var written = 0
    private var pending: (seq: Int, key: String)?
    private(set) var acked: [String] = []
    private(set) var highestAck = 0

    init(name: String, room: String, ports: [Int], node: Int, ledger: SoakLedger) {
        self.name = name
        self.room = room
        self.ports = ports
        self.node = node
        self.ledger = ledger
    }

    /// Writes until `stop`, then returns with its last request answered and its connection open.
    func run(until stop: Flag) async {
        while true {
            guard let client = await connected() else { continue }
            do {
                while true {
                    if pending == nil {
                        if stop.isSet { return }
                        written += 1
                        seq += 1
                        pending = (seq, "\(name)-\(written)")
                    }
                    let (seq, key) = pending!
                    let action = ClusterSoakTests.action(key, written).serialized()
                    client.sendRaw(
                        #"{"type":"action","id":"\#(key)","seq":\#(seq),"action":"#
                            + String(decoding: action, as: UTF8.self) + "}")
                    let answer = try await answer(to: key, on: client)
                    if answer["type"] == "ack" {
                        acked.append(key)
                        highestAck = max(highestAck, answer["version"]?.intValue ?? 0)
                        pending = nil
                    } else if answer["code"] == "unavailable" {
                        // A pause before the refused request is sent again.
                        try await Task.sleep(for: .milliseconds(100))
                    } else {
                        ledger.problem("\(name): \(key) was answered \(answer)")
                        pending = nil
                    }
                }
            } catch {
                drop()
            }
        }
    }

    /// Reads (reconnecting if needed) until the mirror is at `final`; the mirrored state then.
    func reach(_ final: Int) async throws -> JSON? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let version, version >= final { return version == final ? state : nil }
            if client == nil, await connected() == nil { continue }
            guard let client else { continue }
            do {
                try apply(try await client.nextJSON(timeout: .seconds(30)))
            } catch {
                drop()
            }
        }
        return nil
    }

    func close() {
        client?.close()
        client = nil
    }

    /// The open connection, or a new one to the current server synced by its first message; nil (and the next
    /// server chosen) when that fails.
    private func connected() async -> TestClient? {
        if let client { return client }
        var query = "session=soak-\(name)&name=\(name)"
        if let version, let epoch { query += "&since=\(version)&epoch=\(epoch)" }
        do {
            let client = try await TestClient.connect(
                port: ports[node], room: room, query: query, using: sharedTransport)
            self.client = client
            var first: JSON
            repeat {
                first = try await client.nextJSON(timeout: .seconds(30))
            } while first["type"] != "snapshot" && first["type"] != "resume"
            sync(first)
            return client
        } catch {
            drop()
            // A pause before the caller connects again.
            try? await Task.sleep(for: .milliseconds(100))
            return nil
        }
    }

    /// The connection ended (or could not be made): the next one goes to the next server.
    private func drop() {
        client?.close()
        client = nil
        node = (node + 1) % ports.count
    }

    /// A snapshot or resume: the version may go forward, never back; the session's mark says whether the request
    /// in flight was applied.
    private func sync(_ first: JSON) {
        let at = first["version"]?.intValue ?? -1
        if first["type"] == "snapshot" {
            if let version, at < version {
                ledger.problem(
                    "\(name): server \(node) sent a snapshot at version \(at) to a client at \(version): back in time")
            }
            version = at
            state = first["state"] ?? .null
            epoch = first["epoch"]?.stringValue
        } else {
            if at != version { ledger.problem("\(name): resumed at \(at), its mirror was at \(version ?? -1)") }
            if first["epoch"]?.stringValue != epoch { ledger.problem("\(name): resumed in another epoch") }
        }
        if let pending, pending.seq <= first["seq"]?.intValue ?? 0 {
            acked.append(pending.key)
            self.pending = nil
        }
    }

    /// Reads until the answer to `id` arrives, applying the patches before it.
    private func answer(to id: String, on client: TestClient) async throws -> JSON {
        while true {
            let json = try await client.nextJSON(timeout: .seconds(30))
            try apply(json)
            if json["type"] == "ack" || json["type"] == "error", json["id"]?.stringValue == id { return json }
        }
    }

    /// Applies a patch to the mirror (and the ledger); a snapshot the server sends to resynchronise, like a first one.
    private func apply(_ json: JSON) throws {
        switch json["type"]?.stringValue {
        case "patch"?:
            guard case .patch(let at, let ops, let cause, let undo, let redo) = try ServerMessage(json: json) else {
                return
            }
            if let version, at != version + 1 { ledger.problem("\(name): patch \(at) after version \(version)") }
            do {
                _ = try ops.apply(to: &state)
            } catch {
                ledger.problem("\(name): patch \(at) does not apply: \(error)")
            }
            version = at
            let patch = SoakLedger.Patch(ops: ops, cause: cause, undo: undo, redo: redo)
            ledger.saw(patch, text: json.serialized(), version: at, room: room, by: name)
        case "snapshot"?:
            sync(json)
        default:
            break
        }
    }
}
