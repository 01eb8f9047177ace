import LockstepApps
import LockstepCore
import LockstepServer

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
