import Foundation
import LockstepApps
import LockstepCore
import LockstepServer
import LockstepTransport

/// One client-side libwebsockets context for every test: one service thread, many sockets. With
/// `LOCKSTEP_TEST_DEFLATE=1` its connections negotiate permessage-deflate, so every suite runs over compressed frames.
let sharedTransport: WebSocketClient = {
    do {
        return try WebSocketClient(compression: ProcessInfo.processInfo.environment["LOCKSTEP_TEST_DEFLATE"] == "1")
    } catch {
        fatalError("cannot start the test client transport: \(error)")
    }
}()

/// A real server on a free loopback port, shut down when the test's closure returns.
func withServer<T>(
    app: App = .counter,
    clock: ServerClock = .continuous,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (SyncServer) async throws -> T
) async throws -> T {
    var configuration = ServerConfiguration(app: app)
    configuration.port = 0
    configuration.dataDirectory = nil
    configure(&configuration)
    let server = try SyncServer(configuration: configuration, clock: clock)
    defer { server.shutdown() }
    return try await body(server)
}

/// A real server keeping its rooms in `directory` (a real SQLite file).
func withStoredServer<T>(
    in directory: String, app: App = .counter, clock: ServerClock = .continuous,
    configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (SyncServer) async throws -> T
) async throws -> T {
    try await withServer(
        app: app, clock: clock,
        configure: { configuration in
            configuration.dataDirectory = directory
            configure(&configuration)
        }, body)
}

/// A new, empty directory under the system's temporary directory; the caller removes it.
func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "lockstep-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
