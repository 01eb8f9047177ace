import Foundation
import LockstepApps
import LockstepClient
import LockstepCore
import LockstepServer
import LockstepSQLite
import LockstepStorage
import Logging
import Synchronization
import Testing

/// A room stored in a shape the server's app cannot read, joined by Swift clients over real sockets: the client's
/// error carries what the server said, and the server says it once per failed load.
@Suite(.timeLimit(.minutes(1))) struct UnloadableRoomTests {
    @Test func theClientsErrorCarriesTheServersCloseCodeReasonAndMessage() async throws {
        try await withUnloadableRoom { server, logs in
            let client = try RoomClient(url: roomURL(server, "broken"), name: "alice", reconnect: quickRetry)
            let error = await #expect(throws: RoomClientError.self) { try await client.connect() }
            guard case .closedByServer(let code, let reason, let message)? = error else {
                Issue.record("expected closedByServer, got \(String(describing: error))")
                return
            }
            #expect(code == 1011)
            #expect(reason == "the room cannot be loaded")
            #expect(message?.contains("room broken is stored in a shape this server's app cannot read") == true)
            let text = "\(error!)"
            #expect(text.contains("1011") && text.contains("the room cannot be loaded"), "\(text)")
            #expect(text.contains("room broken is stored in a shape"), "\(text)")
            #expect(await client.status == .closed)
            #expect(logs.count(of: "cannot load a room") == 1, "\(logs.messages)")
        }
    }

    /// Each join reads the room again (it may have been fixed meanwhile), and each failed read is logged once, with
    /// the storage's reason, whichever way it is asked for.
    @Test func everyFailedLoadIsLoggedOnce() async throws {
        try await withUnloadableRoom { server, logs in
            for attempt in 1...3 {
                let client = try RoomClient(url: roomURL(server, "broken"), name: "c\(attempt)", reconnect: quickRetry)
                await #expect(throws: RoomClientError.self) { try await client.connect() }
                #expect(logs.count(of: "cannot load a room") == attempt, "\(logs.messages)")
            }
            let entry = try #require(logs.entries.first { $0.message == "cannot load a room" })
            #expect(entry.level == .error)
            #expect(entry.error.contains("cannot be loaded: it does not decode as the app's State"), "\(entry.error)")
        }
    }

    /// A client with a keep directory works offline and keeps trying: its status says why, in the server's words.
    @Test func aKeptClientsStatusSaysWhy() async throws {
        try await withUnloadableRoom { server, logs in
            let keep = NSTemporaryDirectory() + "lockstep-unloadable-keep-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: keep) }
            let client = try RoomClient(
                url: roomURL(server, "broken"), name: "alice", session: "alice-1", reconnect: quickRetry,
                keep: KeepDirectory(keep, app: "counter"))
            try await client.connect()
            try await waitUntil("a status naming why") {
                guard case .disconnected(let reason, _) = await client.status else { return false }
                return reason.contains("the room cannot be loaded: room broken is stored in a shape")
            }
            await client.close()
            #expect(logs.count(of: "cannot load a room") >= 1)
        }
    }

    /// A server on a data directory whose room `broken` holds a state the counter app cannot decode.
    private func withUnloadableRoom(_ body: (SyncServer, CollectedLogs) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "lockstep-unloadable-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try RoomLog(directory: directory, sync: .normal, app: App.counter.name)
        try await log.append(
            changes: [],
            snapshots: [
                StoredSnapshot(
                    room: "broken", version: 0, state: Array(#"{"count":"many"}"#.utf8),
                    history: HistoryCoding.encode(History(depth: 10)))
            ],
            sessions: SessionWrites(idleSeconds: 3_600, limit: 10), keepHistory: 10)
        log.close()
        let logs = CollectedLogs()
        var configuration = ServerConfiguration(app: .counter)
        configuration.port = 0
        let server = try SyncServer(
            configuration: configuration,
            storage: .local(try RoomLog(directory: directory, sync: .normal, app: App.counter.name)),
            logger: Logger(label: "test") { _ in logs.handler })
        defer { server.shutdown() }
        try await body(server, logs)
    }
}

/// Every log entry of a server, kept for a test to read.
final class CollectedLogs: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let error: String
    }

    private let stored = Mutex<[Entry]>([])

    var entries: [Entry] { stored.withLock { $0 } }
    var messages: [String] { entries.map(\.message) }

    func count(of message: String) -> Int { entries.count { $0.message == message } }

    var handler: Handler { Handler(logs: self) }

    fileprivate func record(_ entry: Entry) { stored.withLock { $0.append(entry) } }

    /// A handler that hands every entry to its logs, at every level.
    struct Handler: LogHandler {
        let logs: CollectedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            logs.record(
                Entry(level: event.level, message: "\(event.message)", error: "\(event.metadata?["error"] ?? "")"))
        }
    }
}
