import LockstepApps
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// `SharedStore` predicts: a send shows in `state` before the server's patch arrives, through a relay that holds
/// every byte for 200 ms each way.
@Suite(.timeLimit(.minutes(1)))
struct OptimisticStoreTests {
    @Test func aLocalActionShowsBeforeTheServersPatch() async throws {
        try await withServer(app: .counter) { server in
            let relay = try DelayRelay(targetPort: server.port, delay: .milliseconds(200))
            defer { relay.stop() }
            let store = try SharedStore(Counter(), url: "ws://127.0.0.1:\(relay.port)/rooms/predict")
            try await store.connect()
            let sent = Task { try await store.send(.increment) }
            // The update of the send joining the outbox: predicted at once, while the patch is 400 ms away.
            let queued = try await Self.firstUpdate(of: store) { $0.update.change == .outbox }
            #expect(queued.state == Counter.State(count: 1))
            #expect(queued.isPredicted)
            #expect(queued.confirmedState == Counter.State(count: 0))
            #expect(queued.update.version == 0)

            #expect(try await sent.value == 1)
            #expect(store.confirmedState == Counter.State(count: 1))
            #expect(store.state == Counter.State(count: 1))
            #expect(!store.isPredicted)
            await store.close()
        }
    }

    @Test func anActionTheServerRejectsRollsBack() async throws {
        try await withServer(app: .todos) { server in
            let relay = try DelayRelay(targetPort: server.port, delay: .milliseconds(200))
            defer { relay.stop() }
            let alice = try SharedStore(Todos(), url: roomURL(server, "rollback"), name: "alice")
            let bob = try SharedStore(Todos(), url: "ws://127.0.0.1:\(relay.port)/rooms/rollback", name: "bob")
            try await alice.connect()
            try await alice.send(.add(title: "milk"))
            try await bob.connect()
            #expect(bob.state.items.count == 1)

            // Alice removes the item; Bob, who has not heard of it yet (his path holds the server's messages),
            // toggles it: his prediction shows it done, the server (which applied Alice's remove first) rejects it,
            // and the prediction drops it.
            relay.holdReplies()
            try await alice.send(.remove(id: 1))
            let toggle = Task { try await bob.send(.toggle(id: 1)) }
            let queued = try await Self.firstUpdate(of: bob) { $0.update.change == .outbox }
            #expect(queued.update.version == 1)
            #expect(queued.state.items == [Todos.Item(id: 1, title: "milk", done: true)])
            relay.releaseReplies()
            await #expect(throws: RoomClientError.server(code: "rejected", message: "no todo with id 1")) {
                try await toggle.value
            }
            #expect(bob.state.items.isEmpty)
            #expect(bob.pendingCount == 0)
            await alice.close()
            await bob.close()
        }
    }

    /// The first update of `store` that matches.
    static func firstUpdate<R: Reducer>(
        of store: SharedStore<R>, where matches: @escaping @Sendable (SharedStore<R>.TypedUpdate) -> Bool
    ) async throws -> SharedStore<R>.TypedUpdate {
        try await within(30, "an update") {
            for try await update in store.updates where matches(update) { return update }
            throw TimedOut(what: "an update (the stream ended)")
        }
    }

    @Test func concurrentActionsOfTwoClientsConverge() async throws {
        try await withServer(app: .todos) { server in
            let relay = try DelayRelay(targetPort: server.port, delay: .milliseconds(200))
            defer { relay.stop() }
            let url = "ws://127.0.0.1:\(relay.port)/rooms/converge"
            let stores = try ["alice", "bob"].map { try SharedStore(Todos(), url: url, name: $0) }
            for store in stores { try await store.connect() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        for step in 0..<10 { try await store.send(.add(title: "\(index)-\(step)")) }
                    }
                }
                try await group.waitForAll()
            }
            let server = try await fetchRoom(port: server.port, room: "converge")
            #expect(server.version == 20)
            for store in stores {
                try await waitUntil("the last patch", within: 30) { store.version >= 20 }
                #expect(try store.confirmedState == server.state.decode(Todos.State.self))
                #expect(store.state == store.confirmedState)
                await store.close()
            }
        }
    }
}
