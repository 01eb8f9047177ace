@testable import LockstepClient
import Clocks
import Foundation
import LockstepApps
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepTestSupport
import Testing

/// Timers from the Swift clients, over real sockets: `send(action:after:timer:)` is answered once the server stored
/// the timer, is never predicted, fires on the server's clock (which the tests move), and `cancel(timer:)` takes one
/// away; both go through the outbox, so a timer asked for while the server is away is scheduled once it is back.
@Suite(.timeLimit(.minutes(1)))
struct TimerClientTests {
    static let start = 1_000_000

    /// A counter server on a clock the test moves; presence goes out at once, so only timers sleep on it.
    func withTimedServer(_ body: (SyncServer, TestClock<Duration>) async throws -> Void) async throws {
        let clock = TestClock()
        try await withServer(
            app: .counter, clock: ServerClock(clock, startingAt: Self.start),
            configure: { $0.presenceInterval = .zero }
        ) { server in try await body(server, clock) }
    }

    /// The room's pending timers as `GET /rooms/ROOM/timers` lists them: `(name, due)`.
    func listedTimers(_ server: SyncServer, _ room: String) async throws -> [(String, Int)] {
        let listed = try await HTTPGet(port: server.port, path: "/rooms/\(room)/timers").json
        return (listed?["timers"]?.arrayValue ?? []).map {
            ($0["timer"]?.stringValue ?? "?", $0["due"]?.intValue ?? -1)
        }
    }

    @Test func aScheduledActionIsAnsweredNotPredictedAndFiresWhenDue() async throws {
        try await withTimedServer { server, clock in
            let client = try RoomClient(url: roomURL(server, "later"), name: "alice")
            try await client.connect()
            let timer = try await client.send(action: ["type": "increment"], after: .seconds(30), timer: "turn")
            #expect(timer == ScheduledTimer(name: "turn", dueMilliseconds: Self.start + 30_000))
            #expect(await client.pendingActions.isEmpty, "a scheduled action is not predicted")
            #expect(await client.pendingCount == 0)
            #expect(try await listedTimers(server, "later").map(\.0) == ["turn"])

            // A timer is due at a time, not after a wait: the server's clock may move on before it arms its wait.
            await clock.advance(by: .seconds(29))
            #expect(try await fetchRoom(port: server.port, room: "later").version == 0)
            let fired = Task { try await updates(of: client) { if case .patch = $0.change { true } else { false } } }
            await clock.advance(by: .seconds(1))
            let patch = try #require(try await fired.value.last)
            guard case .patch(_, let cause, _) = patch.change else { throw TimedOut(what: "a patch") }
            #expect(cause.kind == .timer)
            #expect(cause.timer == "turn")
            #expect(cause.name == "alice")
            #expect(patch.state == ["count": 1])
            #expect(try await listedTimers(server, "later").isEmpty)
            await client.close()
        }
    }

    @Test func cancelTakesATimerAwayAndAnUnnamedOneGetsAName() async throws {
        try await withTimedServer { server, _ in
            let client = try RoomClient(url: roomURL(server, "cancel"))
            try await client.connect()
            let unnamed = try await client.send(action: ["type": "add", "amount": 5], after: .seconds(10))
            #expect(unnamed.name.hasPrefix("t-"))
            #expect(unnamed.due == Date(timeIntervalSince1970: Double(Self.start + 10_000) / 1000))
            let replaced = try await client.send(action: ["type": "increment"], after: .seconds(20), timer: unnamed.name)
            #expect(replaced.name == unnamed.name)
            #expect(try await listedTimers(server, "cancel").map(\.1) == [Self.start + 20_000])
            try await client.cancel(timer: unnamed.name)
            #expect(try await listedTimers(server, "cancel").isEmpty)
            // Cancelling a name that is not pending is answered all the same.
            try await client.cancel(timer: "nothing-here")
            await client.close()
        }
    }

    @Test func delaysAndNamesOutsideTheProtocolAreRefusedBeforeSending() async throws {
        try await withTimedServer { server, _ in
            let client = try RoomClient(url: roomURL(server, "bad-timer"))
            try await client.connect()
            await #expect(throws: RoomClientError.self) {
                try await client.send(action: ["type": "increment"], after: .seconds(-1))
            }
            await #expect(throws: RoomClientError.self) {
                try await client.send(action: ["type": "increment"], after: .seconds(8 * 86_400))
            }
            await #expect(throws: RoomClientError.self) {
                try await client.send(action: ["type": "increment"], after: .seconds(1), timer: "not a name")
            }
            await #expect(throws: RoomClientError.self) { try await client.cancel(timer: "") }
            #expect(await client.pendingCount == 0)
            await client.close()
        }
    }

    @Test func timersAskedForWhileTheServerIsAwayAreScheduledOnceItIsBack() async throws {
        let directory = NSTemporaryDirectory() + "lockstep-timers-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try makeServer(app: .counter, dataDirectory: directory)
        let port = first.port
        let client = try RoomClient(url: "ws://127.0.0.1:\(port)/rooms/away", reconnect: quickRetry)
        try await client.connect()
        _ = try await client.send(action: ["type": "increment"], after: .seconds(600), timer: "gone")
        first.shutdown()

        let requests = Task {
            let turn = try await client.send(action: ["type": "increment"], after: .seconds(600), timer: "turn")
            try await client.cancel(timer: "gone")
            return turn
        }
        try await waitUntil("the timer to wait in the outbox") { await client.pendingCount == 1 }
        #expect(await client.pendingActions.isEmpty)

        let second = try makeServer(app: .counter, port: port, dataDirectory: directory)
        defer { second.shutdown() }
        let turn = try await requests.value
        #expect(turn.name == "turn")
        #expect(turn.due != nil)
        let listed = try await HTTPGet(port: port, path: "/rooms/away/timers").json
        #expect(listed?["timers"]?.arrayValue?.map { $0["timer"] } == ["turn"])
        #expect(try await fetchRoom(port: port, room: "away").version == 0)
        await client.close()
    }

    @Test func aSharedStoreSchedulesTypedActionsAndShowsThemWhenTheyFire() async throws {
        try await withTimedServer { server, clock in
            let store = try SharedStore(Counter(), url: roomURL(server, "typed"))
            try await store.connect()
            let timer = try await store.send(.add(amount: 3), after: .seconds(5), timer: "bonus")
            #expect(timer.name == "bonus")
            #expect(store.state.count == 0)
            #expect(!store.isPredicted)
            try await store.send(.increment, after: .seconds(5), timer: "other")
            try await store.cancel(timer: "other")

            await clock.advance(by: .seconds(5))
            try await waitUntil("the timer's change to show", within: 60) { store.state.count == 3 }
            #expect(store.version == 1)
            #expect(try await fetchRoom(port: server.port, room: "typed").state == ["count": 3])
            await store.close()
        }
    }
}
