import Foundation
import LockstepApps
import LockstepClient
import LockstepCore
import LockstepJSON
import LockstepServer
import LockstepSQLite
import LockstepTestSupport

/// Polls `condition` every 10 ms until it holds, failing with `TimedOut` after `seconds` (an upper bound, generous for
/// a loaded machine).
func waitUntil(
    _ what: String, within seconds: Double = 30, _ condition: @escaping @Sendable () async throws -> Bool
) async throws {
    try await within(seconds, what) {
        while try await !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }
}

/// A real server on a free loopback port (or `port`), for the duration of `body`.
func withServer<T>(
    app: App = .counter, port: Int = 0, clock: ServerClock = .continuous,
    configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (SyncServer) async throws -> T
) async throws -> T {
    let server = try makeServer(app: app, port: port, clock: clock, configure: configure)
    defer { server.shutdown() }
    return try await body(server)
}

func makeServer(
    app: App, port: Int = 0, dataDirectory: String? = nil, clock: ServerClock = .continuous,
    configure: (inout ServerConfiguration) -> Void = { _ in }
) throws -> SyncServer {
    var configuration = ServerConfiguration(app: app)
    configuration.port = port
    configuration.rateLimit = 0
    configure(&configuration)
    let storage: ServerStorage =
        try dataDirectory.map { .local(try RoomLog(directory: $0, sync: .normal, app: app.name)) } ?? .memory
    return try SyncServer(configuration: configuration, storage: storage, clock: clock)
}

func roomURL(_ server: SyncServer, _ room: String) -> String { "ws://127.0.0.1:\(server.port)/rooms/\(room)" }

/// A fast retry policy so reconnection tests do not wait seconds.
let quickRetry = ReconnectPolicy(initialDelay: .milliseconds(20), maxDelay: .milliseconds(200))

/// `GET /rooms/ROOM` over a plain socket: the server's own view of a room, `(version, state)`.
func fetchRoom(port: Int, room: String) async throws -> (version: Int, state: JSON) {
    guard let json = try await HTTPGet(port: port, path: "/rooms/\(room)").json else {
        throw TimedOut(what: "a JSON answer from GET /rooms/\(room)")
    }
    return (json["version"]?.intValue ?? -1, json["state"] ?? .null)
}

/// Reads a client's updates until one satisfies `done`, returning all of them; bounded by `seconds`.
func updates(
    of client: RoomClient, within seconds: Double = 30, until done: @escaping @Sendable (RoomUpdate) -> Bool
) async throws -> [RoomUpdate] {
    try await within(seconds, "an update of \(client.room)") {
        var seen: [RoomUpdate] = []
        for await update in client.updates {
            seen.append(update)
            if done(update) { return seen }
        }
        throw TimedOut(what: "an update (the stream ended)")
    }
}

/// The versions a sequence of updates showed, checking each patch follows its predecessor.
func isContiguous(_ updates: [RoomUpdate]) -> Bool {
    var version: Int?
    for update in updates {
        switch update.change {
        case .snapshot: version = update.version
        case .patch:
            guard let previous = version, update.version == previous + 1 else { return false }
            version = update.version
        default: continue
        }
    }
    return true
}
