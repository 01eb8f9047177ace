import LockstepApps
import LockstepClient
import LockstepJSON
import Testing

/// ``RoomClient/updates`` keeps every update once it is read, and only the newest few before: an app that shows only
/// the mirror does not keep every change the room ever had.
@Suite(.timeLimit(.minutes(1)))
struct UnreadUpdatesTests {
    static let changes = 600

    @Test func aClientNobodyReadsKeepsOnlyTheNewestUpdates() async throws {
        try await withServer(app: .counter) { server in
            let shown = try RoomClient(url: roomURL(server, "unread"), name: "shown")
            let writer = try RoomClient(url: roomURL(server, "unread"), name: "writer")
            try await shown.connect()
            try await writer.connect()
            for _ in 1...Self.changes { _ = try await writer.send(action: ["type": "increment"]) }
            try await waitUntil("the mirror to reach every change") { await shown.version == Self.changes }
            await shown.close()
            await writer.close()

            var versions: [Int] = []
            for await update in shown.updates { versions.append(update.version) }
            #expect(versions.count <= RoomClient.unreadUpdatesLimit, "kept \(versions.count) updates nobody read")
            // The newest are kept, in order: the patches up to the last change, then the close.
            let patches = versions.filter { $0 > 0 }
            #expect(patches.last == Self.changes)
            #expect(zip(patches, patches.dropFirst()).allSatisfy { $0 <= $1 && $1 <= $0 + 1 })
        }
    }

    @Test func aClientReadFromTheStartGetsEveryUpdate() async throws {
        try await withServer(app: .counter) { server in
            let reader = try RoomClient(url: roomURL(server, "read"), name: "reader")
            let writer = try RoomClient(url: roomURL(server, "read"), name: "writer")
            try await reader.connect()
            let seen = Task {
                var versions: [Int] = []
                for await update in reader.updates where update.change != .snapshot { versions.append(update.version) }
                return versions
            }
            try await writer.connect()
            for _ in 1...Self.changes { _ = try await writer.send(action: ["type": "increment"]) }
            try await waitUntil("the mirror to reach every change") { await reader.version == Self.changes }
            await reader.close()
            await writer.close()
            let patched = Set(await seen.value.filter { $0 > 0 })
            #expect(patched == Set(1...Self.changes), "every change, read from the start")
        }
    }
}
