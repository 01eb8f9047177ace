// The Swift snippets of the main README.md, as they appear there, so that they keep compiling: a snippet that is a
// whole program or needs a running server is wrapped in a function that the tests do not call.
import Foundation
import Kanban
import LockstepApps
import LockstepClient
import LockstepCore
import LockstepSQLite
import LockstepServer
import LockstepTesting
import Testing

@testable import poll_server

// "Reliable clients"
func sharedStoreSnippet() async throws {
    let store = try SharedStore(Todos(), url: "ws://127.0.0.1:8080/rooms/groceries", session: "phone-7f3a")
    try await store.connect()
    Task {
        // The predicted state, on every patch and every send; confirmedState is the server's.
        for try await update in store.updates {
            print(update.state.items.map(\.title), "pending:", update.update.pendingCount)
        }
    }
    try await store.send(.add(title: "milk"))  // shows at once; returns the version once acknowledged
}

// "Build your own server", and the end of "Write your own reducer"
func runSnippet() async throws {
    let poll = App("poll", summary: "a poll", reducer: Poll())
    let log = try RoomLog(directory: "./lockstep-data", sync: .normal, app: poll.name)
    let server = try SyncServer(configuration: ServerConfiguration(app: poll), storage: .local(log))
    try await server.run()  // until Ctrl-C or SIGTERM, then drains
}

@MainActor @Test func votesCount() {
    let store = TestStore(Poll())
    store.send(.vote(option: "pizza")) { $0.votes = ["pizza": 1] }
    store.reject(.vote(option: String(repeating: "x", count: 41)))
    store.undo { $0.votes = [:] }
}

func productionStillReplays() throws {
    let recording = try Recording(ndjson: Array(try Data(contentsOf: URL(fileURLWithPath: "poll.ndjson"))))
    RecordingReplay(Poll()).check(recording)
}

// "Write your own reducer": the kanban example's rule, in front of its reducer.
let board = Board().middleware { state, action, context throws(Rejection) in
    if case .delete(let id) = action, let card = state.card(id), card.author != context.sender?.subject {
        throw Rejection("only \(card.author) may delete card \(id)")
    }
    return action
}
