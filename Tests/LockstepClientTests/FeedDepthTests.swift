import Foundation
import LockstepApps
@testable import LockstepClient
import LockstepCore
import LockstepJSON
import Observation
import Synchronization
import Testing

/// A mirror hands every change to its receiver through an ``UpdateFeed``. Its receiver must be called the same way
/// for the ten-thousandth change as for the first: a receiver wrapped again on each change costs every later change
/// a longer chain of calls, and a long-lived client its stack. Measured as the depth of the call stack the receiver
/// (or an observer it notifies) runs on, which is the same for every value sent from one place.
@Suite(.timeLimit(.minutes(1)))
struct FeedDepthTests {
    /// The depths seen by a receiver, in order.
    final class Depths: Sendable {
        private let seen = Mutex<[Int]>([])
        func record() { seen.withLock { $0.append(Thread.callStackSymbols.count) } }
        var all: [Int] { seen.withLock { $0 } }
    }

    @Test func aFeedCallsItsReceiverAtTheSameDepthForEveryValue() {
        let feed = UpdateFeed<Int>(isolation: nil)
        let depths = Depths()
        feed.start { _ in depths.record() }
        for value in 0..<64 { feed.send(value) }
        #expect(depths.all.count == 64)
        #expect(Set(depths.all).count == 1, "depths \(depths.all)")
    }

    @Test func aMirrorChangesAtTheSameDepthAfterManyPatchesAndResyncs() async throws {
        let room = try RoomClient(url: "ws://127.0.0.1:9/rooms/depth")
        let depths = Depths()
        var version = 0
        for round in 0..<4 {
            // A fresh snapshot, as after a resync or a reconnection, then patches on it.
            await room.receive(Self.snapshot(version, you: "c\(round)"))
            for _ in 0..<16 {
                version += 1
                withObservationTracking {
                    _ = room.mirror.version
                } onChange: {
                    depths.record()
                }
                await room.receive(Self.countPatch(version))
            }
        }
        #expect(depths.all.count == 64)
        #expect(Set(depths.all).count == 1, "depths \(depths.all)")
        await room.close()
    }

    @Test func aStoreChangesAtTheSameDepthAfterManyPatches() async throws {
        let store = try SharedStore(Counter(), url: "ws://127.0.0.1:9/rooms/depth")
        let depths = Depths()
        await store.room.receive(Self.snapshot(0, you: "c1"))
        for version in 1...64 {
            withObservationTracking {
                _ = store.version
            } onChange: {
                depths.record()
            }
            await store.room.receive(Self.countPatch(version))
        }
        #expect(store.state.count == 64)
        #expect(depths.all.count == 64)
        #expect(Set(depths.all).count == 1, "depths \(depths.all)")
        await store.close()
    }

    /// The server's snapshot of a counter at `version`, for the connection `you`.
    static func snapshot(_ version: Int, you: String) -> ServerMessage {
        .snapshot(room: "depth", you: you, version: version, state: ["count": .int(version)], undo: 0, redo: 0)
    }

    /// The server's patch that sets the counter to `version`.
    static func countPatch(_ version: Int) -> ServerMessage {
        .patch(
            version: version, ops: JSONPatch([.replace(path: try! JSONPointer("/count"), value: .int(version))]),
            cause: Cause(kind: .action), undo: 0, redo: 0)
    }
}
