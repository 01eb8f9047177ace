import Dispatch
import LockstepPostgres
import LockstepStorage
import LockstepTestSupport
import Logging
import Synchronization
import Testing

/// Every PostgreSQL test, one at a time: each runs its own server, and several starting at once on a small machine
/// starve each other past the storage's timeouts.
@Suite(.serialized, .postgresExclusive) enum PostgresTests {}

/// Opens a storage on `server`'s database with short timeouts, for tests.
func openStorage(
    _ server: PostgresServer, app: String = "counter", peerLifetime: Duration = .seconds(15),
    // Generous unless a test is about the timeout: the rest of the suite runs beside these on two cores.
    operationTimeout: Duration = .seconds(60)
) async throws -> PostgresRoomStorage {
    var configuration = PostgresRoomStorage.Configuration()
    configuration.peerLifetime = peerLifetime
    configuration.operationTimeout = operationTimeout
    configuration.keepHistory = 2
    var logger = Logger(label: "lockstep.postgres.test")
    logger.logLevel = .warning
    return try await PostgresRoomStorage(url: server.url, app: app, configuration: configuration, logger: logger)
}

/// Waits until `condition` holds, checking every 20 ms for at most `timeout`; whether it held.
func eventually(within timeout: Duration = .seconds(30), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}

/// Collects a storage's events as they come.
final class EventCollector: Sendable {
    private final class Received: Sendable {
        let events = Mutex<[StorageEvent]>([])
    }

    private let received: Received
    private let task: Task<Void, Never>

    init(_ storage: PostgresRoomStorage) {
        let stream = storage.events()
        let received = Received()
        self.received = received
        task = Task { for await event in stream { received.events.withLock { $0.append(event) } } }
    }

    var events: [StorageEvent] { received.events.withLock { $0 } }

    func contains(_ event: StorageEvent, within timeout: Duration = .seconds(30)) async -> Bool {
        await eventually(within: timeout) { events.contains(event) }
    }

    deinit { task.cancel() }
}

func change(_ room: String, _ version: Int, _ text: String = "") -> StoredChange {
    StoredChange(room: room, version: version, message: Array("m\(version)\(text)".utf8), record: Array("i\(version)".utf8))
}

extension PostgresRoomStorage {
    /// A locked write that names no sessions, for tests about the log alone.
    func write(
        room: String, after version: Int, prepare: @escaping @Sendable ([StoredChange]) async -> RoomWrite
    ) async throws(StorageError) {
        try await write(room: room, after: version, sessions: []) { await prepare($0.missed) }
    }
}
