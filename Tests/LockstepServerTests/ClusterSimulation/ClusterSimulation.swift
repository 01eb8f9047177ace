import LockstepApps
import LockstepCore
import LockstepJSON
@testable import LockstepServer
import LockstepStorage
import LockstepTestSupport

/// Several servers sharing one log, their clients and the faults between them, driven by one seeded scheduler with
/// no real time, threads, sockets or database: each step runs one pending task (a delivery, a transaction's lock or
/// commit, a catch-up's read, a pump) or one spontaneous event (a client's request, a dropped connection, a server
/// killed, the database restarting), picked by the seed; after each step the invariants are checked. The servers'
/// decisions are the real ``SharedLogMachine``, their rooms the real stores, reducers and patches, their requests
/// ``RoomTurn``, their catch-ups ``CommittedReplay``, their rollbacks ``StoreRollback``, their marks ``SessionMarks``.
final class ClusterSimulation {
    /// How often each fault happens, per step, in permille; drawn per seed, so some seeds are calm and some stormy.
    struct Faults {
        var kill = 0
        var databaseDown = 0
        var drop = 0
        var lostNotice = 0
        var failedCommit = 0
        var uncertainCommit = 0
        var giveUp = 0
    }

    /// A transaction of a room's locked write at the database.
    struct Transaction {
        enum Phase { case waiting, prepared, done }

        let id: Int
        let server: Int
        let incarnation: Int
        let name: String
        let room: Int
        let attempt: Int
        let after: Int
        let sessions: [String]
        var phase = Phase.waiting
        var rows: [StoredChange] = []
        var states: [JSON] = []
        var marks: [StoredMark] = []
        var requests: [String] = []
        var timerOps: [SimulatedLog.TimerOp] = []
        var cancels: [(name: String, at: Int)] = []
        var scheduledHere: Set<String> = []
    }

    /// A catch-up's read: the pump's, following's.
    struct CatchUpRead {
        enum Purpose { case pump, follow }

        let server: Int
        let incarnation: Int
        let room: Int
        let name: String
        let purpose: Purpose
        let after: Int
        var rows: [StoredChange]?
    }

    let seed: UInt64
    let app: App
    /// One server with a log of its own (SQLite's group commit) instead of several sharing one: a quarter of the
    /// seeds, picked apart from the scheduler's draws.
    let localLog: Bool
    var random: SplitMix64
    var step = 0
    var steps: Int
    var faults: Faults
    var faultsOn = true
    var log: SimulatedLog
    var servers: [SimulatedServer] = []
    var clients: [SimulatedClient] = []
    var connections: [Int: SimulatedConnection] = [:]
    var transactions: [Int: Transaction] = [:]
    var reads: [Int: CatchUpRead] = [:]
    var tasks: [SimulatedTask] = []
    var nextID = 0
    var patchesSent = 0
    var violations: [String] = []
    #if LOCKSTEP_MUTANTS
    /// The copy of a room each publisher of the mutant `publicationPerRoomCopy` publishes.
    var copies: [String: SimulatedRoom] = [:]
    #endif
    /// Every step's event, when asked for (a replayed seed prints it).
    var trace: [String]?

    init(seed: UInt64, steps: Int = 1500, tracing: Bool = false) {
        self.seed = seed
        var random = SplitMix64(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 1)
        let app = [App.counter, .todos, HandsDocument.app][Int(random.next() % 3)]
        self.app = app
        let names = (0..<Int(1 + random.next() % 2)).map { "room\($0)" }
        let initial = try! app.makeStore(undoDepth: 50).stateJSON()
        log = SimulatedLog(rooms: names, initial: initial)
        localLog = (seed &* 0x9E37_79B9_7F4A_7C15) >> 62 == 0
        let serverCount = localLog ? 1 : Int(2 + random.next() % 3)
        servers = (0..<serverCount).map(SimulatedServer.init)
        let clientCount = Int(2 + random.next() % 5)
        for index in 0..<clientCount {
            let sight = Self.sight(
                of: index, in: app, initial: initial, twin: clients.last { $0.index == index - 3 },
                random: &random)
            clients.append(SimulatedClient(index: index, room: names[index % names.count], sight: sight))
        }
        let calm = random.next() % 4 == 0
        func rate(_ most: UInt64) -> Int { calm ? 0 : Int(random.next() % (most + 1)) }
        var faults = Faults(
            kill: rate(6), databaseDown: rate(4), drop: rate(30), lostNotice: rate(300), failedCommit: rate(80),
            uncertainCommit: rate(80), giveUp: rate(40))
        if localLog {
            // A disk fails a write outright (full) or the process dies; nothing is shared, nothing is uncertain.
            faults.failedCommit /= 4
            (faults.databaseDown, faults.lostNotice, faults.uncertainCommit, faults.giveUp) = (0, 0, 0, 0)
        }
        self.faults = faults
        self.random = random
        self.steps = steps
        trace = tracing ? [] : nil
        let serving = "\(serverCount) servers\(localLog ? " with a log of its own" : "")"
        note("\(serving), rooms \(names), \(clientCount) clients, app \(app.name), faults \(faults)")
        note("clients see \(clients.map(\.seeing))")
    }

    /// What a client sees: under private parts, a part of the room (or all of it) as a subject (or no one) sees it;
    /// otherwise mostly the whole room, now and then the part at one key. Half the time a client follows the part its
    /// `twin` follows (with the same subject, but for the third client's, which has none): two tabs of one user, or
    /// a user and an anonymous reader on one stream.
    private static func sight(
        of index: Int, in app: App, initial: JSON, twin: SimulatedClient?, random: inout SplitMix64
    ) -> any RoomSight {
        let draw = Int(random.next() % 6)
        guard !app.privateParts.isEmpty else {
            let key = initial.objectValue?.keys.first.map { "/\($0)" } ?? ""
            return roomSight(following: try! JSONPointer(draw == 0 ? key : ""), reader: nil, redacting: false)
        }
        let subjects = HandsDocument.subjects
        let reader = index % 4 == 3 ? nil : subjects[index % subjects.count]
        if let twin = twin?.view, random.next() % 2 == 0 {
            return roomSight(following: twin.path.path, reader: reader, redacting: true)
        }
        let paths = ["", "", "/board", "/hands", "/hands/\(subjects[1])", "/vault"]
        return roomSight(following: try! JSONPointer(paths[draw]), reader: reader, redacting: true)
    }

    // MARK: - Running

    /// Runs the seed's steps, then lets everything settle with no faults and checks that it did; returns the
    /// violations (the first one ends the run).
    func run() -> [String] {
        while step < steps, violations.isEmpty {
            step += 1
            stepOnce()
            checkInvariants()
        }
        if violations.isEmpty { settle() }
        return violations
    }

    private func stepOnce() {
        let enabled = tasks.indices.filter { isEnabled(tasks[$0]) }
        if enabled.isEmpty || chance(300) {
            spontaneous()
        } else {
            let task = tasks.remove(at: enabled[below(enabled.count)])
            note("\(task)")
            perform(task)
        }
    }

    /// No more faults or requests: servers restart, the database comes back, clients reconnect, every server reads
    /// what its clients' rooms missed; then every request is answered and everyone holds the log's latest version.
    private func settle() {
        note("settling")
        faultsOn = false
        log.downUntil = 0
        for server in servers where !server.alive { restart(server) }
        var renewed = false
        for _ in 0..<50_000 where violations.isEmpty {
            step += 1
            let enabled = tasks.indices.filter { isEnabled(tasks[$0]) }
            if !enabled.isEmpty {
                let task = tasks.remove(at: enabled[below(enabled.count)])
                note("\(task)")
                perform(task)
            } else if let client = clients.first(where: { $0.connection == nil }) {
                connect(client)
            } else if let client = clients.first(where: { $0.joined && !$0.refused.isEmpty }) {
                resendRefused(client)
            } else if !renewed {
                renewed = true
                for server in servers { renew(server) }
            } else if timersPending {
                // Time passes until the timers the log holds come due; every server polls and fires.
                renewed = false
                for server in servers {
                    loadTimers(on: server)
                    fireDue(on: server)
                }
            } else {
                return checkSettled()
            }
            checkInvariants()
        }
        if violations.isEmpty { violate("still busy after 50 000 steps of settling") }
    }

    // MARK: - Spontaneous events

    private func spontaneous() {
        switch below(100) {
        case 0..<36:
            // A client with requests answered `unavailable` sends those again before anything new.
            let client = clients[below(clients.count)]
            if client.joined { client.refused.isEmpty ? act(client) : resendRefused(client) }
        case 36..<40:
            if let server = servers.filter(\.alive).randomElement(using: &random) { fireDue(on: server) }
        case 40..<46:
            let client = clients[below(clients.count)]
            if client.joined { read(client) }
        case 46..<66:
            let client = clients[below(clients.count)]
            if client.connection == nil { connect(client) }
        case 66..<70:
            if let server = servers.filter(\.alive).randomElement(using: &random) { renew(server) }
        case 70..<73:
            evictSomething()
        case 73..<78:
            if let server = servers.filter({ !$0.alive }).randomElement(using: &random) { restart(server) }
        case 78..<84:
            let client = clients[below(clients.count)]
            if client.joined { setPresence(client) }
        default:
            faultEvent()
        }
    }

    private func faultEvent() {
        guard faultsOn else { return }
        if chance(faults.drop * 10),
            let client = clients.filter({ $0.connection != nil }).randomElement(
                using: &random)
        {
            note("client \(client.index) loses its connection")
            disconnect(client)
        }
        if chance(faults.kill * 10), localLog || servers.filter(\.alive).count > 1,
            let server = servers.filter(\.alive).randomElement(using: &random)
        {
            kill(server)
        }
        if chance(faults.databaseDown * 10), !log.isDown(at: step) {
            log.downUntil = step + 10 + below(60)
            note("the database restarts, until step \(log.downUntil)")
            tasks.append(.databaseUp)
        }
        if chance(faults.giveUp * 10) { giveUpSomething() }
    }

    // MARK: - Helpers

    func makeID() -> Int {
        nextID += 1
        return nextID
    }

    /// True `permille` times in a thousand.
    func chance(_ permille: Int) -> Bool { Int(random.next() % 1000) < permille }

    func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

    func note(_ event: @autoclosure () -> String) {
        if trace != nil { trace!.append("\(step): \(event())") }
    }

    func violate(_ message: String) {
        violations.append("step \(step): \(message)")
    }

    func isEnabled(_ task: SimulatedTask) -> Bool {
        switch task {
        case .lock(let id):
            guard let transaction = transactions[id] else { return true }
            return log.isDown(at: step) || log.rooms[transaction.name]!.lockedBy == nil
        case .databaseUp:
            return !log.isDown(at: step)
        default:
            return true
        }
    }

    func perform(_ task: SimulatedTask) {
        switch task {
        case .toServer(let id): deliverToServer(id)
        case .toClient(let id): deliverToClient(id)
        case .join(let id): join(id)
        case .pump(let server, let incarnation, let room, let name):
            if let room = liveRoom(server, incarnation, room, name) { runPump(room, on: servers[server]) }
        case .lock(let id): lock(id)
        case .commit(let id): commit(id)
        case .read(let id): readAtDatabase(id)
        case .readDone(let id): readDone(id)
        case .timerRoomRead(let server, let incarnation, let room):
            guard servers[server].alive, servers[server].incarnation == incarnation else { return }
            timerRoomRead(room, on: servers[server])
        case .retryDue(let server, let incarnation, let room, let name):
            if let room = liveRoom(server, incarnation, room, name) {
                room.machine.retryDue()
                runPump(room, on: servers[server])
            }
        case .localWrite(let server, let incarnation):
            guard servers[server].alive, servers[server].incarnation == incarnation else { return }
            startLocalWrite(on: servers[server])
        case .localWritten(let server, let incarnation):
            guard servers[server].alive, servers[server].incarnation == incarnation else { return }
            localWriteReturned(on: servers[server])
        case .timersReread(let server, let incarnation, let room, let read):
            guard servers[server].alive, servers[server].incarnation == incarnation else { return }
            timersReread(room, read: read, on: servers[server])
        case .notify(let server, let incarnation, let room, let version):
            guard servers[server].alive, servers[server].incarnation == incarnation else { return }
            for other in servers where other.index != server && other.alive {
                if faultsOn, chance(faults.lostNotice) { continue }
                tasks.append(.notice(server: other.index, incarnation: other.incarnation, room: room, version: version))
            }
        case .notice(let server, let incarnation, let room, let version):
            guard servers[server].alive, servers[server].incarnation == incarnation else { return }
            committed(room, version: version, on: servers[server])
        case .databaseUp:
            for server in servers where server.alive {
                for room in server.sortedRooms {
                    room.machine.mayHaveMissed()
                    wake(room, on: server)
                    readPeers(of: room, on: server)
                }
            }
        case .publish(let server, let incarnation, let room, let peers):
            publish(peers, of: room, server: server, incarnation: incarnation)
        case .publicationWaited(let server, let incarnation, let room):
            publicationWaited(room, server: server, incarnation: incarnation)
        case .peersNotice(let server, let incarnation, let room):
            guard servers[server].alive, servers[server].incarnation == incarnation else { return }
            peersNoticed(room, on: servers[server])
        case .peersRead(let server, let incarnation, let room, let name):
            peersReadAtDatabase(server: server, incarnation: incarnation, room: room, name: name)
        case .peersReadDone(let server, let incarnation, let room, let name, let peers):
            peersRead(peers, server: server, incarnation: incarnation, room: room, name: name)
        }
    }

    /// The room of a task, if its server still holds that copy of it.
    func liveRoom(_ server: Int, _ incarnation: Int, _ room: Int, _ name: String) -> SimulatedRoom? {
        let server = servers[server]
        guard server.alive, server.incarnation == incarnation, let live = server.rooms[name], live.id == room else {
            return nil
        }
        return live
    }
}
