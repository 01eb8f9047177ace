import Foundation
import LockstepApps
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Observation
import Synchronization
import Testing

/// `SharedStore` and `RoomClient.mirror` are `Observable`: `withObservationTracking` (what a SwiftUI view uses) hears
/// of each change once, on the main actor the app chose.
@Suite(.timeLimit(.minutes(1)))
struct ObservationTests {
    /// Each observer call, once it was found on the main actor.
    final class Threads: Sendable {
        let onMain = Mutex<[Bool]>([])
    }

    /// Starts observing what `read` reads, at once: the returned wait ends after its next change, with the new value.
    /// Observing before the change is made (not from a task that may start after it) is what a view does.
    @MainActor
    static func nextChange<T: Sendable>(
        of read: @escaping @MainActor () -> T, onMain: Threads
    ) -> @MainActor () async throws -> T {
        let (changed, continuation) = AsyncStream<Void>.makeStream()
        withObservationTracking {
            _ = read()
        } onChange: {
            // Observers run where the store changes: on the main actor it was given (a trap otherwise).
            MainActor.assertIsolated("an observed change outside the main actor")
            onMain.onMain.withLock { $0.append(true) }
            continuation.finish()
        }
        return {
            try await within(30, "an observed change") {
                for await _ in changed {}
            }
            return read()
        }
    }

    @Test func aStoreOnTheMainActorReportsEachChangeOnce() async throws {
        try await withServer(app: .counter) { server in try await Self.observeCounter(at: roomURL(server, "observed")) }
    }

    /// A counter store on the main actor, observed through five increments and a confirmation.
    @MainActor
    static func observeCounter(at url: String) async throws {
        do {
            let store = try SharedStore(Counter(), url: url, isolation: MainActor.shared)
            let onMain = Threads()
            let status = Self.nextChange(of: { store.status }, onMain: onMain)
            try await store.connect()
            #expect(try await status() == .live)

            var seen: [Int] = []
            for step in 1...5 {
                let change = Self.nextChange(of: { store.state.count }, onMain: onMain)
                try await store.enqueue(.increment)
                seen.append(try await change())
                #expect(store.state.count == step, "the state a view body reads is the new one")
            }
            #expect(seen == [1, 2, 3, 4, 5], "each change once, in order")
            // Confirmation changes the confirmed state, not the prediction: an observer of `state` hears nothing.
            let spurious = Mutex(false)
            withObservationTracking { _ = store.state } onChange: { spurious.withLock { $0 = true } }
            try await waitUntil("the server to confirm") { @MainActor in store.pendingCount == 0 }
            try await waitUntil("the confirmed state") { @MainActor in store.confirmedState.count == 5 }
            #expect(!spurious.withLock { $0 })
            try await store.send(.increment)
            try await waitUntil("the sixth increment to show") { @MainActor in store.state.count == 6 }
            // The status and five increments were each heard once, every time on the main actor.
            #expect(onMain.onMain.withLock { $0.count } == 6)
            await store.close()
        }
    }

    @Test func aRoomClientsMirrorIsReadableWithoutAwaiting() async throws {
        try await withServer(app: .counter) { server in
            let room = try RoomClient(url: roomURL(server, "mirror"))
            let changed = Mutex(0)
            withObservationTracking { _ = room.mirror.state } onChange: { changed.withLock { $0 += 1 } }
            try await room.connect()
            try await room.send(action: ["type": "add", "amount": 2])
            #expect(room.mirror.state == ["count": 2])
            #expect(room.mirror.version == 1)
            #expect(room.mirror.status == .live)
            #expect(room.mirror.peers.count == 1)
            #expect(changed.withLock { $0 } == 1, "one tracking, one call")
            await room.close()
            #expect(room.mirror.status == .closed)
        }
    }
}
