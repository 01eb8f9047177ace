@testable import LockstepClient
import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// The outbox over real sockets: requests sent while the server is away, or in flight when the connection drops,
/// are applied exactly once and every send returns.
@Suite(.timeLimit(.minutes(1)))
struct OutboxTests {
    @Test func sendsWhileTheServerIsAwayWaitAndApplyOnce() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-outbox-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try makeServer(app: .counter, dataDirectory: directory)
        let port = first.port
        let client = try RoomClient(url: "ws://127.0.0.1:\(port)/rooms/away", reconnect: quickRetry)
        try await client.connect()
        for _ in 0..<3 { try await client.send(action: ["type": "increment"]) }
        first.shutdown()

        let sends = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<5 { group.addTask { try await client.send(action: ["type": "increment"]) } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        try await waitUntil("five queued sends", within: 30) { await client.pendingCount >= 5 }
        #expect(await client.pendingActions.count == 5)

        let second = try makeServer(app: .counter, port: port, dataDirectory: directory)
        defer { second.shutdown() }
        let versions = try await sends.value
        #expect(versions.sorted() == [4, 5, 6, 7, 8])
        #expect(try await fetchRoom(port: port, room: "away").state == ["count": 8])
        #expect(await client.pendingCount == 0)
        await client.close()
    }

    @Test func requestsInFlightWhenTheConnectionDropsApplyOnce() async throws {
        try await withServer(app: .counter) { server in
            let relay = try DelayRelay(targetPort: server.port, delay: .milliseconds(20))
            defer { relay.stop() }
            let client = try RoomClient(url: "ws://127.0.0.1:\(relay.port)/rooms/drops", reconnect: quickRetry)
            try await client.connect()
            let total = 300
            let sends = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<total { group.addTask { try await client.send(action: ["type": "increment"]) } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
            }
            // Cut the path three times while requests and acks are on the wire.
            for _ in 0..<3 {
                // The faults' pace; however many requests are on the wire then, each must apply once.
                try await Task.sleep(for: .milliseconds(60))
                relay.cutConnections()
            }
            let versions = try await within(20, "every send to return") { try await sends.value }
            #expect(versions.count == total)
            // A request the server had applied before the drop returns the version its sync showed, which includes it.
            #expect(versions.allSatisfy { (1...total).contains($0) })
            let room = try await fetchRoom(port: server.port, room: "drops")
            #expect(room.state == ["count": .int(total)])
            #expect(room.version == total)
            await client.close()
        }
    }

    @Test func aRequestTheServerRefusesFailsAndLeavesTheOutbox() async throws {
        try await withServer(app: .counter) { server in
            let client = try RoomClient(url: roomURL(server, "refused"))
            try await client.connect()
            await #expect(throws: RoomClientError.self) { try await client.send(action: ["type": "nope"]) }
            let nothing = RoomClientError.server(code: "nothing_to_undo", message: "there is nothing to undo")
            await #expect(throws: nothing) { try await client.undo() }
            #expect(await client.pendingCount == 0)
            #expect(try await client.send(action: ["type": "increment"]) == 1)
            await client.close()
        }
    }

    @Test func theOutboxIsBounded() async throws {
        try await withServer(app: .counter) { server in
            let client = try RoomClient(url: roomURL(server, "bounded"), outboxLimit: 2, reconnect: quickRetry)
            try await client.connect()
            server.shutdown()
            _ = try await updates(of: client) {
                if case .status(.disconnected) = $0.change { return true }
                return false
            }
            let waiting = (0..<2).map { _ in Task { try await client.send(action: ["type": "increment"]) } }
            try await waitUntil("two queued sends", within: 30) { await client.pendingCount >= 2 }
            await #expect(throws: RoomClientError.outboxFull(limit: 2)) {
                try await client.send(action: ["type": "increment"])
            }
            await client.close()
            for task in waiting { await #expect(throws: RoomClientError.closed) { try await task.value } }
        }
    }

    @Test func anInvalidSessionNameIsRefusedBeforeConnecting() {
        #expect(throws: RoomClientError.invalidSession("no spaces")) {
            try RoomClient(url: "ws://127.0.0.1:1/rooms/x", session: "no spaces")
        }
    }
}
