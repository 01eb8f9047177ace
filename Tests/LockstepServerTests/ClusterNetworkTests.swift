import Foundation
import LockstepCore
import LockstepJSON
import LockstepTestSupport
import Testing

/// Two `lockstep serve --postgres` processes on separate network paths: node A in a network namespace reached by
/// its clients over one veth pair and reaching PostgreSQL over another, node B and PostgreSQL on the host. Only A's
/// path to the database is cut, for five seconds, so what is tested is a server that its clients reach and its
/// database does not: while A is idle (then, once the link is back, a burst of writes on both servers while A's
/// writes cut off at the start may still be on their way to the database), and in the middle of a client's writes.
///
/// About 10 s each; the limit leaves room for a loaded machine running every suite at once.
@Suite(.serialized, .postgresExclusive, .timeLimit(.minutes(10)))
struct ClusterNetworkTests {
    static let room = "cut"
    /// How long the database link stays down.
    static let cut = Duration.seconds(5)

    /// A on its namespace's address, B and PostgreSQL on the host; everything is stopped and removed when `body`
    /// returns or throws.
    private func withSplitCluster(
        _ body: (NetworkNamespace, NamespaceLink, ServerProcess, ServerProcess) async throws -> Void
    ) async throws {
        // Slot 1: NetworkFaultTests may use slot 0 at the same time in this process.
        let namespace = try await blocking { try NetworkNamespace(slot: 1) }
        defer { namespace.remove() }
        let databaseLink = try await blocking { try namespace.addLink() }
        let postgres = try await blocking { try PostgresServer(listenAddresses: [databaseLink.hostAddress]) }
        defer { postgres.stop() }
        let options = ["--app", "counter", "--postgres-timeout", "1s", "--peer-lifetime", "15s", "--rate-limit", "0"]
        let b = try await blocking { try ServerProcess(arguments: options + ["--postgres", postgres.url]) }
        defer { b.terminate() }
        let throughLink = "postgres://postgres@\(databaseLink.hostAddress):\(postgres.port)/\(postgres.database)"
        let a = try await blocking {
            try ServerProcess(in: namespace, arguments: options + ["--postgres", throughLink])
        }
        defer { a.kill9() }
        try await body(namespace, databaseLink, a, b)
    }

    /// Runs `work`, which blocks (child processes, reads of their output), on a thread of its own, so the few threads
    /// that run every test's tasks stay free.
    private func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    @Test(.enabled(
        if: NetworkNamespace.isAvailable,
        "needs root and iproute2 to put a server in a network namespace (ip netns, veth); CI runs it as root"))
    func aServerCutOffFromItsDatabaseAcknowledgesNothingThenCatchesUp() async throws {
        try await withSplitCluster { namespace, databaseLink, a, b in
            try await cutOffAndCatchUp(namespace, databaseLink, a, b)
        }
    }

    private func cutOffAndCatchUp(
        _ namespace: NetworkNamespace, _ databaseLink: NamespaceLink, _ a: ServerProcess, _ b: ServerProcess
    ) async throws {
        let aHost = namespace.innerAddress
        let healthOfA = { try await HTTPGet(host: aHost, port: a.port, path: "/healthz").status }

        let onA = try await TestClient.connect(host: aHost, port: a.port, room: Self.room, using: sharedTransport)
        let onB = try await TestClient.connect(port: b.port, room: Self.room, using: sharedTransport)
        defer {
            onA.close()
            onB.close()
        }
        // Both servers write the room and see each other's changes.
        #expect(try await increment(onA, id: "a1") == .ack(id: "a1", version: 1))
        #expect(try await increment(onB, id: "b1") == .ack(id: "b1", version: 2))
        #expect(try await increment(onA, id: "a2") == .ack(id: "a2", version: 3))
        try await onA.catchUp(to: 3)
        try await onB.catchUp(to: 3)
        #expect(try await healthOfA() == 200)
        // A second room, written on both servers as soon as A is healthy again, while A's write cut off in it may
        // still reach the database late.
        let burstOnA = try await TestClient.connect(host: aHost, port: a.port, room: "burst", using: sharedTransport)
        let burstOnB = try await TestClient.connect(port: b.port, room: "burst", using: sharedTransport)
        defer {
            burstOnA.close()
            burstOnB.close()
        }
        #expect(try await increment(burstOnA, id: "x1") == .ack(id: "x1", version: 1))
        #expect(try await increment(burstOnB, id: "y1") == .ack(id: "y1", version: 2))
        try await burstOnA.catchUp(to: 2)

        namespace.setLink(databaseLink, up: false)
        let cutAt = ContinuousClock.now

        // A applies nothing: its first requests wait for the database calls to time out, the next is refused at once.
        burstOnA.send(.action(id: "x-cut", action: ["type": "increment"]))
        #expect(try await increment(onA, id: "cut1")?.code == "unavailable")
        let refusedAfter = ContinuousClock.now - cutAt
        #expect(try await answers(burstOnA, ids: ["x-cut"])["x-cut"]?.code == "unavailable")
        #expect(try await poll(for: .seconds(5)) { try await healthOfA() == 503 }, "A's /healthz answers 503")
        #expect(try await increment(onA, id: "cut2")?.code == "unavailable")

        // B keeps acknowledging.
        for version in 4...6 {
            #expect(try await increment(onB, id: "b\(version)") == .ack(id: "b\(version)", version: version))
        }
        // A's client moves to B, resumes from the version it holds without a gap, and writes there.
        let moved = try await TestClient.connect(
            port: b.port, room: Self.room, query: "since=3", using: sharedTransport)
        defer { moved.close() }
        guard case .resume(Self.room, _, 3) = try await moved.next() else {
            Issue.record("a client resuming on B with since=3 did not get resume at 3")
            return
        }
        #expect(try await patchVersions(moved, count: 3) == [4, 5, 6])
        #expect(try await increment(moved, id: "m7") == .ack(id: "m7", version: 7))

        // The fault itself: the link stays down for the whole cut, however soon the checks above were done.
        try await Task.sleep(until: cutAt + Self.cut)
        namespace.setLink(databaseLink, up: true)
        let healedAt = ContinuousClock.now

        #expect(try await poll(for: .seconds(20)) { try await healthOfA() == 200 }, "A's /healthz answers 200 again")
        let healthyAfter = ContinuousClock.now - healedAt
        let burst = 30
        for n in 1...burst {
            burstOnA.send(.action(id: "xa\(n)", action: ["type": "increment"]))
            burstOnB.send(.action(id: "yb\(n)", action: ["type": "increment"]))
        }
        // The client that stayed on A receives every version B committed during the cut, in order.
        try await onA.catchUp(to: 7, timeout: .seconds(20))
        let caughtUpAfter = ContinuousClock.now - healedAt
        // A writes again; B and the moved client see it.
        #expect(try await increment(onA, id: "a8") == .ack(id: "a8", version: 8))
        #expect(try await increment(onB, id: "b9") == .ack(id: "b9", version: 9))
        try await onA.catchUp(to: 9)
        try await onB.catchUp(to: 9)
        #expect(try await patchVersions(moved, count: 2) == [8, 9])
        #expect(await onA.gaps == [])
        #expect(await onA.snapshots == 1, "A's client was never resynchronised")
        #expect(await onA.state == ["count": 9])
        #expect(await onB.state == ["count": 9])
        // Every request of the burst is applied once, in one order on both servers.
        let burstAnswers = try await answers(burstOnA, ids: Set((1...burst).map { "xa\($0)" }))
            .merging(try await answers(burstOnB, ids: Set((1...burst).map { "yb\($0)" }))) { first, _ in first }
        let burstVersions = burstAnswers.values.compactMap { answer -> Int? in
            if case .ack(_, let version) = answer { version } else { nil }
        }
        #expect(burstVersions.sorted() == Array(3...(2 + 2 * burst)), "\(burstAnswers.filter { $0.value.code != nil })")
        try await burstOnA.catchUp(to: 2 + 2 * burst)
        try await burstOnB.catchUp(to: 2 + 2 * burst)
        for client in [burstOnA, burstOnB] {
            #expect(await client.gaps == [])
            #expect(await client.state == ["count": .int(2 + 2 * burst)])
        }
        // A new client of A resuming from before the cut gets the same versions from A.
        let resumedOnA = try await TestClient.connect(
            host: aHost, port: a.port, room: Self.room, query: "since=3", using: sharedTransport)
        defer { resumedOnA.close() }
        guard case .resume(Self.room, _, 3) = try await resumedOnA.next() else {
            Issue.record("a client resuming on A with since=3 did not get resume at 3")
            return
        }
        #expect(try await patchVersions(resumedOnA, count: 6) == Array(4...9))
        print(
            "ClusterNetworkTests: A answered unavailable \(refusedAfter) into the cut; after it, A was healthy in "
                + "\(healthyAfter) and its client caught up in \(caughtUpAfter)")
    }

    @Test(.enabled(
        if: NetworkNamespace.isAvailable,
        "needs root and iproute2 to put a server in a network namespace (ip netns, veth); CI runs it as root"))
    func aCutDuringWritesLosesNoAcknowledgedChangeAndAppliesEachSessionRequestOnce() async throws {
        try await withSplitCluster { namespace, databaseLink, a, b in
            let aHost = namespace.innerAddress
            let onA = try await TestClient.connect(
                host: aHost, port: a.port, room: "mid", query: "session=mid", using: sharedTransport)
            defer { onA.close() }
            _ = try await onA.nextJSON(type: "snapshot")
            let total = 300
            for seq in 1...100 { onA.sendRaw(Self.request(seq)) }
            var acked = Set(try await sessionAnswers(onA, count: 100).filter(\.value).keys)
            #expect(acked.count == 100)
            // The link goes down while the next requests are being sent and written.
            let sender = Task {
                for seq in 101...total {
                    onA.sendRaw(Self.request(seq))
                    // The sender's pace, so the cut falls among the requests.
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            try await Task.sleep(for: .milliseconds(150))
            namespace.setLink(databaseLink, up: false)
            try await sender.value
            let answered = try await sessionAnswers(onA, count: total - 100)
            acked.formUnion(answered.filter(\.value).keys)
            let refused = answered.values.filter { !$0 }.count
            print("ClusterNetworkTests: of \(total) requests \(acked.count) were acknowledged, \(refused) refused")
            // The fault itself: the link stays down for the whole cut.
            try await Task.sleep(for: Self.cut)
            namespace.setLink(databaseLink, up: true)
            #expect(try await poll(for: .seconds(20)) {
                try await HTTPGet(host: aHost, port: a.port, path: "/healthz").status == 200
            })
            // The client comes back through B with its session and sends again what was not acknowledged.
            let again = try await TestClient.connect(
                port: b.port, room: "mid", query: "session=mid", using: sharedTransport)
            defer { again.close() }
            let snapshot = try await again.nextJSON(type: "snapshot")
            let mark = snapshot["seq"]?.intValue ?? -1
            #expect(acked.allSatisfy { $0 <= mark }, "the mark \(mark) covers every acknowledged request")
            let unacked = (1...total).filter { !acked.contains($0) }
            for seq in unacked { again.sendRaw(Self.request(seq)) }
            let resent = try await sessionAnswers(again, count: unacked.count)
            #expect(resent.values.allSatisfy { $0 }, "every request sent again is acknowledged")
            try await again.catchUp(to: total)
            #expect(await again.state == ["count": .int(total)], "each request applied exactly once")
            // What A's client received before and during the cut had no gap, and A serves the rest from there.
            #expect(await onA.gaps == [])
            let seen = await onA.version
            let resumed = try await TestClient.connect(
                host: aHost, port: a.port, room: "mid", query: "since=\(seen)", using: sharedTransport)
            defer { resumed.close() }
            guard case .resume("mid", _, seen) = try await resumed.next() else {
                Issue.record("a client resuming on A with since=\(seen) did not get resume at \(seen)")
                return
            }
            #expect(try await patchVersions(resumed, count: total - seen) == Array((seen + 1)...total))
        }
    }

    /// Sends an increment and reads (past patches and presence) until its answer: an ack or an error with its id.
    private func increment(_ client: TestClient, id: String) async throws -> ServerMessage? {
        client.send(.action(id: id, action: ["type": "increment"]))
        return try await answers(client, ids: [id])[id]
    }

    /// An increment numbered `seq` in its session, with the id `r<seq>`.
    private static func request(_ seq: Int) -> String {
        #"{"type":"action","id":"r\#(seq)","seq":\#(seq),"action":{"type":"increment"}}"#
    }

    /// Reads answers to session requests `r<seq>` until `count` came or the connection closed: whether each was
    /// acknowledged, by seq.
    private func sessionAnswers(_ client: TestClient, count: Int) async throws -> [Int: Bool] {
        var answers: [Int: Bool] = [:]
        do {
            while answers.count < count {
                let json = try await client.nextJSON()
                guard let id = json["id"]?.stringValue, id.hasPrefix("r"), let seq = Int(id.dropFirst()) else {
                    continue
                }
                answers[seq] = json["type"]?.stringValue == "ack"
            }
        } catch TestClientError.closed {}
        return answers
    }

    /// Reads until the client has an answer (ack or error) to each of `ids`; the answers by id.
    private func answers(_ client: TestClient, ids: Set<String>) async throws -> [String: ServerMessage] {
        var answers: [String: ServerMessage] = [:]
        while answers.count < ids.count {
            let message = try await client.next()
            switch message {
            case .ack(let id?, _), .error(let id?, _, _):
                if ids.contains(id) { answers[id] = message }
            default: break
            }
        }
        return answers
    }

    /// The versions of the next `count` patches the client receives.
    private func patchVersions(_ client: TestClient, count: Int) async throws -> [Int] {
        var versions: [Int] = []
        while versions.count < count {
            if case .patch(let version, _, _, _, _) = try await client.next() { versions.append(version) }
        }
        return versions
    }

    /// Whether `condition` holds within `limit`, tried every 100 ms.
    private func poll(for limit: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }
}

extension ServerMessage {
    /// An error's code; nil for every other message.
    fileprivate var code: String? {
        if case .error(_, let code, _) = self { code } else { nil }
    }
}
