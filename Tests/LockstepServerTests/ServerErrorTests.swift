import Foundation
import LockstepApps
import LockstepCore
import LockstepServer
import LockstepTestSupport
import Testing

/// A server that cannot start says why: a ``ServerError`` whose message names the fix, and from `lockstep serve` that
/// message alone, with no libwebsockets lines and no type from a module that is not a product.
@Suite(.timeLimit(.minutes(1))) struct ServerErrorTests {
    @Test func aBusyPortIsPortInUse() async throws {
        try await withServer { first in
            var configuration = ServerConfiguration(app: .counter)
            configuration.port = first.port
            let error = #expect(throws: ServerError.self) { _ = try SyncServer(configuration: configuration) }
            #expect(error == .portInUse(host: "127.0.0.1", port: first.port))
            #expect(error?.message.contains("port \(first.port) on 127.0.0.1 is already in use") == true)
        }
    }

    /// 192.0.2.1 is for documentation (RFC 5737): never an address of this machine.
    @Test func anAddressOfAnotherMachineCannotBeListenedOn() async throws {
        var configuration = ServerConfiguration(app: .counter)
        configuration.host = "192.0.2.1"
        configuration.port = 0
        let error = #expect(throws: ServerError.self) { _ = try SyncServer(configuration: configuration) }
        #expect(error == .cannotListen(host: "192.0.2.1", port: 0, reason: "Cannot assign requested address"))
        let run = try await Launched.run(
            ["serve", "--host", "192.0.2.1", "--insecure", "--port", "0", "--memory"], environment: [:])
        #expect(run.status == 1)
        #expect(run.output.contains("cannot listen on 192.0.2.1:0: Cannot assign requested address"))
        Self.expectOnlyTheReason(run.output)
    }

    @Test func serveOnABusyPortPrintsOnlyTheReason() async throws {
        try await withServer { first in
            let run = try await Launched.run(["serve", "--port", "\(first.port)", "--memory"], environment: [:])
            #expect(run.status == 1)
            #expect(run.output.contains("port \(first.port) on 127.0.0.1 is already in use by another process"))
            Self.expectOnlyTheReason(run.output)
        }
    }

    @Test func serveOnALockedDirectoryPrintsOnlyTheReason() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withStoredServer(in: directory) { _ in
            let run = try await Launched.run(["serve", "--port", "0", "--data", directory], environment: [:])
            #expect(run.status == 1)
            #expect(run.output.contains("another lockstep server is using the data directory \(directory)"))
            Self.expectOnlyTheReason(run.output)
        }
    }

    /// Nothing listens on the port of the URL: the server gives up within `--postgres-timeout` and says so.
    @Test func serveWithAnUnreachableDatabasePrintsOnlyTheReason() async throws {
        let port = try PostgresServer.freePort()
        let url = "postgres://lockstep@127.0.0.1:\(port)/lockstep"
        let run = try await Launched.run(
            ["serve", "--port", "0", "--postgres", url, "--postgres-timeout", "500ms"], environment: [:])
        #expect(run.status == 1)
        #expect(run.output.contains("the database cannot be reached"))
        Self.expectOnlyTheReason(run.output)
    }

    /// One line, the error's message, and no type name from the modules behind the products.
    private static func expectOnlyTheReason(_ output: String) {
        let lines = output.split(separator: "\n")
        #expect(lines.count == 1, "\(output)")
        for internalName in ["TransportError", "StorageError", "contextCreationFailed", "lws", "ERROR"] {
            #expect(!output.contains(internalName), "\(output)")
        }
    }
}
