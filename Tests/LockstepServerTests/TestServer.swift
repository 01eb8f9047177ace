import Foundation
import LockstepApps
import LockstepCore
import LockstepServer
import LockstepSQLite
import LockstepStorage
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

/// A real server on a free loopback port, its rooms in memory or in `directory` (a real SQLite file), shut down when
/// the test's closure returns.
func withServer<T>(
    app: App = .counter,
    clock: ServerClock = .continuous,
    directory: String? = nil,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (SyncServer) async throws -> T
) async throws -> T {
    var configuration = ServerConfiguration(app: app)
    configuration.port = 0
    configure(&configuration)
    let server = try SyncServer(
        configuration: configuration, storage: try storage(in: directory, app: configuration.app), clock: clock)
    defer { server.shutdown() }
    return try await body(server)
}

/// The SQLite log in `directory` as `lockstep serve --data` opens it (memory when nil), its errors as the command
/// reports them.
func storage(in directory: String?, app: App) throws -> ServerStorage {
    guard let directory else { return .memory }
    do throws(StorageError) {
        return .local(try RoomLog(directory: directory, sync: .normal, app: app.name))
    } catch {
        throw ServerError(error)
    }
}

/// A real server keeping its rooms in `directory` (a real SQLite file).
func withStoredServer<T>(
    in directory: String, app: App = .counter, clock: ServerClock = .continuous,
    configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (SyncServer) async throws -> T
) async throws -> T {
    try await withServer(app: app, clock: clock, directory: directory, configure: configure, body)
}

/// A new, empty directory under the system's temporary directory; the caller removes it.
func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "lockstep-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
