import LockstepApps
import LockstepCore
import LockstepServer
import LockstepTransport

/// One client-side libwebsockets context for every test: one service thread, many sockets.
let sharedTransport: WebSocketClient = {
    do {
        return try WebSocketClient()
    } catch {
        fatalError("cannot start the test client transport: \(error)")
    }
}()

/// A real server on a free loopback port, shut down when the test's closure returns.
func withServer<T>(
    app: App = .counter,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (SyncServer) async throws -> T
) async throws -> T {
    var configuration = ServerConfiguration(app: app)
    configuration.port = 0
    configure(&configuration)
    let server = try SyncServer(configuration: configuration)
    defer { server.shutdown() }
    return try await body(server)
}
