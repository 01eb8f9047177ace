import Foundation
import Glibc
import LockstepApps
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Clients that keep their session, outbox and last state in a directory: restarts offline, a `kill -9`, and kept
/// files a client must not trust.
@Suite(.timeLimit(.minutes(2)))
struct KeepTests {
    /// A fresh directory for one test.
    static func directory() -> String {
        let path = NSTemporaryDirectory() + "lockstep-keep-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The names of the files set aside in `directory`.
    static func setAside(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.contains(".set-aside-") }
    }

    @Test func hundredActionsTypedOfflineAcrossThreeRestartsAreAppliedOnceInOrder() async throws {
        let keep = Self.directory()
        let data = Self.directory()
        defer {
            try? FileManager.default.removeItem(atPath: keep)
            try? FileManager.default.removeItem(atPath: data)
        }
        let reserved = try ReservedPort()
        let port = reserved.port
        let url = "ws://127.0.0.1:\(port)/rooms/offline-100"
        var session: String?
        var store: SharedStore<Todos>?
        // Four runs of 25 actions: started, stopped and started again three times, the server away all along.
        for run in 0..<4 {
            let next = try SharedStore(Todos(), url: url, reconnect: quickRetry, keep: keep)
            // The kept actions show before any network: predicted over the room's initial state.
            #expect(next.state.items.map(\.title) == (0..<(25 * run)).map { "item \($0)" })
            #expect(next.pendingCount == 25 * run)
            if let session { #expect(next.room.session == session, "the kept session is reused") }
            session = next.room.session
            try await next.connect()
            for index in (25 * run)..<(25 * run + 25) { try await next.enqueue(.add(title: "item \(index)")) }
            #expect(next.pendingCount == 25 * run + 25)
            #expect(next.isPredicted)
            if run < 3 {
                await next.close()
            } else {
                store = next
            }
        }
        guard let store else { return }
        reserved.release()
        let server = try makeServer(app: .todos, port: port, dataDirectory: data)
        defer { server.shutdown() }
        try await waitUntil("the kept actions to be applied", within: 30) { store.pendingCount == 0 }
        let room = try await fetchRoom(port: port, room: "offline-100")
        #expect(room.version == 100, "exactly 100 changes")
        let titles = try room.state.decode(Todos.State.self).items.map(\.title)
        #expect(titles == (0..<100).map { "item \($0)" }, "each once, in order")
        #expect(store.confirmedState.items.count == 100)
        #expect(!store.isPredicted)
        await store.close()

        // Started once more, it resumes from the kept state and has nothing left to send.
        let again = try SharedStore(Todos(), url: url, keep: keep)
        #expect(again.state.items.count == 100)
        #expect(again.pendingCount == 0)
        try await again.connect()
        try await waitUntil("the resumed client to be live") { again.status == .live }
        await again.close()
        #expect(try await fetchRoom(port: port, room: "offline-100").version == 100)
    }

    @Test func aClientKilledWithSignal9BetweenActionsLosesAndRepeatsNothing() async throws {
        let keep = Self.directory()
        let data = Self.directory()
        defer {
            try? FileManager.default.removeItem(atPath: keep)
            try? FileManager.default.removeItem(atPath: data)
        }
        let reserved = try ReservedPort()
        let port = reserved.port
        let arguments = [
            "ws://127.0.0.1:\(port)/rooms/killed", "--app", "counter", "--session", "phone-1", "--keep", keep,
        ]
        // Two runs killed with -9 after their fifth kept action, before the next one.
        for run in 0..<2 {
            let client = try ClientProcess(arguments: arguments)
            for count in (5 * run + 1)...(5 * run + 5) { try await client.keep("+", expecting: count) }
            try await offThePool {
                client.child.send(SIGKILL)
                _ = client.child.waitForExit()
            }
        }
        reserved.release()
        let server = try makeServer(app: .counter, port: port, dataDirectory: data)
        defer { server.shutdown() }
        // The third run sends five more, then everything kept, and exits once all fifteen are applied.
        let client = try ClientProcess(arguments: arguments)
        for count in 11...15 { try await client.keep("+", expecting: count, orFewer: true) }
        client.child.closeInput()
        let status = try await client.exitStatus()
        #expect(status == 0)
        let room = try await fetchRoom(port: port, room: "killed")
        #expect(room.state == ["count": 15])
        #expect(room.version == 15)
    }

    @Test func aCorruptKeptFileIsSetAsideAndTheClientStartsFresh() async throws {
        let keep = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: keep) }
        try Data("{\"format\":2,\"room\":".utf8).write(to: URL(fileURLWithPath: keep + "/corrupt.json"))
        try await withServer(app: .counter) { server in
            let room = try RoomClient(url: roomURL(server, "corrupt"), keep: KeepDirectory(keep, app: "counter"))
            #expect(await room.pendingCount == 0)
            #expect(await !room.hasState)
            #expect(Self.setAside(in: keep).count == 1)
            try await room.connect()
            try await room.send(action: ["type": "increment"])
            await room.close()
            let kept = try JSON(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: keep + "/corrupt.json"))))
            #expect(kept["state"] == ["count": 1], "a fresh file replaces the corrupt one")
        }
    }

    @Test func aFileOfAnotherRoomOrAppIsSetAside() async throws {
        let keep = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: keep) }
        try await withServer(app: .counter) { server in
            let first = try RoomClient(url: roomURL(server, "first"), keep: KeepDirectory(keep, app: "counter"))
            try await first.connect()
            try await first.send(action: ["type": "add", "amount": 7])
            await first.close()
            // The first room's file, put where the second room's would be.
            try FileManager.default.copyItem(atPath: keep + "/first.json", toPath: keep + "/second.json")
            let second = try RoomClient(url: roomURL(server, "second"), keep: KeepDirectory(keep, app: "counter"))
            #expect(await !second.hasState)
            #expect(Self.setAside(in: keep).count == 1)
            try await second.connect()
            #expect(await second.state == ["count": 0])
            await second.close()
            // Another app's client does not read the counter's file.
            let other = try RoomClient(url: roomURL(server, "first"), keep: KeepDirectory(keep, app: "todos"))
            #expect(await !other.hasState)
            #expect(Self.setAside(in: keep).count == 2)
            await other.close()
        }
    }

    @Test func aFileOfAnOlderFormatIsRead() async throws {
        let keep = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: keep) }
        try await withServer(app: .counter) { server in
            let seed = try RoomClient(url: roomURL(server, "older"))
            try await seed.connect()
            try await seed.send(action: ["type": "add", "amount": 5])
            let epoch = await seed.epoch
            await seed.close()
            // Format 1: no nextSeq, synced or mirroredAt; one action kept, numbered 1, never answered.
            let older: JSON = [
                "format": 1, "app": "counter", "room": "older", "path": "", "session": "tablet",
                "epoch": epoch.map(JSON.string) ?? .null, "version": 1, "state": ["count": 5],
                "outbox": [["id": "old-1", "request": ["type": "action", "id": "old-1", "action": ["type": "increment"]],
                    "seq": 1]],
            ]
            try Data(older.serialized()).write(to: URL(fileURLWithPath: keep + "/older.json"))
            let room = try RoomClient(url: roomURL(server, "older"), keep: KeepDirectory(keep, app: "counter"))
            #expect(room.session == "tablet")
            #expect(await room.state == ["count": 5])
            #expect(await room.pendingActions == [["type": "increment"]])
            #expect(Self.setAside(in: keep).isEmpty)
            try await room.connect()
            try await waitUntil("the kept action to be applied") { await room.pendingCount == 0 }
            #expect(try await fetchRoom(port: server.port, room: "older").state == ["count": 6])
            await room.close()
        }
    }

    @Test func aKeptStateOfAnotherHistoryIsSetAside() async throws {
        let keep = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: keep) }
        let port: Int
        do {
            let first = try makeServer(app: .counter)
            port = first.port
            let room = try RoomClient(url: roomURL(first, "epochs"), keep: KeepDirectory(keep, app: "counter"))
            try await room.connect()
            try await room.send(action: ["type": "add", "amount": 3])
            await room.close()
            first.shutdown()
        }
        // A server without the old data: the room's history starts over, with another epoch.
        let second = try makeServer(app: .counter, port: port)
        defer { second.shutdown() }
        let room = try RoomClient(url: roomURL(second, "epochs"), keep: KeepDirectory(keep, app: "counter"))
        #expect(await room.state == ["count": 3], "the kept state shows first")
        try await room.connect()
        try await waitUntil("the server's snapshot") { await room.state == ["count": 0] }
        #expect(Self.setAside(in: keep).count == 1)
        await room.close()
    }
}

/// A `lockstep-client --keep` reading commands from a pipe, its stdout read as JSON lines.
extension ClientProcess {
    /// Types `command` and waits until the client says it is kept with `count` requests waiting (at most `count`
    /// when the server is there and answers some meanwhile).
    func keep(_ command: String, expecting count: Int, orFewer: Bool = false) async throws {
        child.write(Array("\(command)\n".utf8))
        let lines = self.lines
        try await within(20, "the client to keep \(command) (\(count) waiting)") {
            for await line in lines where line["event"] == "kept" {
                let pending = line["pending"]?.intValue ?? -1
                if pending == count || (orFewer && pending <= count) { return }
                throw TimedOut(what: "\(count) kept requests, not \(pending)")
            }
            throw TimedOut(what: "a kept line (the client ended)")
        }
    }

    /// Waits for the client to exit; its status.
    func exitStatus() async throws -> Int32 {
        let lines = self.lines
        try await within(30, "lockstep-client to exit") { for await _ in lines {} }
        return try await offThePool { [child] in child.waitForExit() }
    }
}
