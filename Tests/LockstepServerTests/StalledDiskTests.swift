import Foundation
import LockstepCore
import LockstepJSON
import LockstepTestSupport
import Testing

/// A data directory whose disk stalls (frozen with `fsfreeze`): changes applied in memory wait for the log, and a
/// client joining meanwhile is shown only what the log has, so a crash before the write lands takes back nothing it
/// saw.
@Suite(.timeLimit(.minutes(3))) struct StalledDiskTests {
    @Test(.enabled(if: FreezableFilesystem.isAvailable, "freezing a loop-mounted ext4 needs root"))
    func aClientJoiningWhileAChangeWaitsForTheDiskIsShownItOnlyOnceItIsStored() async throws {
        let disk = try FreezableFilesystem()
        defer { disk.remove() }
        let arguments = ["--app", "counter", "--data", disk.path + "/data", "--rate-limit", "0"]
        let server = try await ServerProcess.start(arguments: arguments)
        var killed = false
        defer { if !killed { server.terminate() } }

        let alice = try await TestClient.connect(port: server.port, room: "stall", using: sharedTransport)
        _ = try await alice.next { $0.isSnapshot }
        alice.send(.action(id: "a1", action: ["type": "increment"]))
        #expect(try await alice.next { $0.isAck } == .ack(id: "a1", version: 1))

        // Version 2 is applied in memory; its write waits for the disk.
        disk.freeze()
        alice.send(.action(id: "a2", action: ["type": "increment"]))
        let bob = try await TestClient.connect(port: server.port, room: "stall", using: sharedTransport)
        try await waitForMetric("lockstep_connections", toReach: 2, port: server.port)
        let shownWhileStalled = await bob.drain(timeout: .seconds(2))
        #expect(shownWhileStalled.isEmpty, "bob was shown a version the log does not have: \(shownWhileStalled)")
        disk.thaw()
        #expect(try await alice.next { $0.isAck } == .ack(id: "a2", version: 2))
        var snapshot = shownWhileStalled.first
        if snapshot == nil { snapshot = try await bob.next() }
        if case .snapshot(_, _, let version, let state, _, _) = snapshot {
            #expect(version == 2)
            #expect(state == ["count": 2])
        } else {
            Issue.record("bob's first message is \(String(describing: snapshot)), not a snapshot")
        }

        // Version 3 waits for the disk, carol joins, and the server dies before the write lands.
        disk.freeze()
        alice.send(.action(id: "a3", action: ["type": "increment"]))
        let carol = try await TestClient.connect(port: server.port, room: "stall", using: sharedTransport)
        try await waitForMetric("lockstep_connections", toReach: 3, port: server.port)
        _ = await carol.drain(timeout: .seconds(2))
        // Its thread blocked on the frozen disk ends only once it thaws: the write it was in never completes.
        server.child.send(SIGKILL)
        disk.thaw()
        _ = try await within(20, "the killed server to exit") { try await offThePool { server.child.waitForExit() } }
        killed = true

        // Restarted, the log is at version 2, and version 3 is someone else's change.
        let restarted = try await ServerProcess.start(arguments: arguments)
        defer { restarted.terminate() }
        let dave = try await TestClient.connect(port: restarted.port, room: "stall", using: sharedTransport)
        let restart = try await dave.next { $0.isSnapshot }
        if case .snapshot(_, _, let version, _, _, _) = restart {
            #expect(version == 2, "the write in flight when the server was killed was stored after all")
        }
        dave.send(.action(id: "d1", action: ["type": "add", "amount": 10]))
        #expect(try await dave.next { $0.isAck } == .ack(id: "d1", version: 3))

        // Whatever carol was shown is what the log holds at that version, so resuming from it is sound.
        let shown = await carol.version
        if shown >= 0 {
            let stored = try #require(
                try await HTTPGet(port: restarted.port, path: "/rooms/stall?version=\(shown)").json)
            #expect(await carol.state == stored["state"], "carol was shown version \(shown) as the log never had it")
        }
        let query = shown >= 0 ? "since=\(shown)" : ""
        let again = try await TestClient.connect(
            port: restarted.port, room: "stall", query: query, using: sharedTransport)
        let first = try await again.next()
        if case .snapshot(_, _, let version, let state, _, _) = first {
            #expect(version == 3)
            #expect(state == ["count": 12])
        }
    }

    /// A view's client resuming while a change to its view waits for the disk: the view's stream opens after that
    /// change was applied, so it carries none of it, and the client gets a snapshot (once the change is stored)
    /// instead of a resume that would skip it.
    @Test(.enabled(if: FreezableFilesystem.isAvailable, "freezing a loop-mounted ext4 needs root"))
    func aViewsClientResumingWhileAChangeToItWaitsForTheDiskMissesNothing() async throws {
        let disk = try FreezableFilesystem()
        defer { disk.remove() }
        let server = try await ServerProcess.start(arguments: ["--data", disk.path + "/data", "--rate-limit", "0"])
        defer { server.terminate() }
        func write(_ value: Int) -> ClientMessage {
            let op: JSON = ["op": "add", "path": "/a/n", "value": .int(value)]
            return .action(id: "w\(value)", action: ["type": "patch", "ops": [op]])
        }
        let writer = try await TestClient.connect(port: server.port, room: "view", using: sharedTransport)
        _ = try await writer.next { $0.isSnapshot }
        writer.send(.action(id: "w0", action: ["type": "patch", "ops": [["op": "add", "path": "/a", "value": [:]]]]))
        #expect(try await writer.next { $0.isAck } == .ack(id: "w0", version: 1))

        // Its view's stream closes with it.
        let reader = try await TestClient.connect(
            port: server.port, room: "view", query: "path=/a", using: sharedTransport)
        _ = try await reader.next { $0.isSnapshot }
        reader.close()
        try await waitForMetric("lockstep_connections", toReachAtMost: 1, port: server.port)

        disk.freeze()
        writer.send(write(2))
        let again = try await TestClient.connect(
            port: server.port, room: "view", query: "path=/a&since=1", using: sharedTransport)
        // It has joined while the change waits for the disk.
        try await waitForMetric("lockstep_connections", toReach: 2, port: server.port)
        disk.thaw()
        #expect(try await writer.next { $0.isAck } == .ack(id: "w2", version: 2))
        writer.send(write(3))
        #expect(try await writer.next { $0.isAck } == .ack(id: "w3", version: 3))

        // Whether resumed or sent a snapshot, the reader ends with what the view shows at version 3.
        var mirror: JSON = [:]
        var version = 1
        while version < 3 {
            switch try await again.next() {
            case .snapshot(_, _, let at, let state, _, _):
                (mirror, version) = (state, at)
            case .resume(_, _, let at):
                version = at
            case .patch(let at, let ops, _, _, _):
                #expect(at == version + 1, "the reader at \(version) got the patch of version \(at)")
                _ = try ops.apply(to: &mirror)
                version = at
            default:
                continue
            }
        }
        #expect(mirror == ["n": 3])
    }
}
