import LockstepApps
import LockstepClient
import LockstepCore
import LockstepServer
import LockstepTestSupport
import Testing

@Suite(.timeLimit(.minutes(1)))
struct SharedStoreTests {
    @Test func typedTodosShareTheServersTypes() async throws {
        try await withServer(app: .todos) { server in
            let alice = try SharedStore(Todos(), url: roomURL(server, "typed"), name: "alice")
            let bob = try SharedStore(Todos(), url: roomURL(server, "typed"), name: "bob")
            try await alice.connect()
            try await bob.connect()
            #expect(alice.state == Todos.State())
            try await alice.send(.add(title: "milk"))
            try await alice.send(.add(title: "bread"))
            let version = try await bob.send(.toggle(id: 1))
            #expect(version == 3)
            #expect(bob.state.items == [
                Todos.Item(id: 1, title: "milk", done: true), Todos.Item(id: 2, title: "bread"),
            ])
            // Alice sees bob's change through her own typed updates.
            let final = try await within(30, "alice to reach version 3") {
                for try await update in alice.updates where update.update.version == 3 { return update.state }
                throw TimedOut(what: "version 3")
            }
            #expect(final.items.first?.done == true)
            await #expect(throws: RoomClientError.server(code: "rejected", message: "no todo with id 42")) {
                try await alice.send(.toggle(id: 42))
            }
            try await alice.undo()
            #expect(alice.state.items.allSatisfy { !$0.done })
            await alice.close()
            await bob.close()
        }
    }

    @Test func aStateOfAnotherShapeIsACodingError() async throws {
        try await withServer(app: .counter) { server in
            let store = try SharedStore(Todos(), url: roomURL(server, "shape"))
            await #expect(throws: RoomClientError.self) { try await store.connect() }
            await store.close()
        }
    }
}
