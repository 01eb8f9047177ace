import LockstepPostgres
import LockstepStorage
import LockstepTestSupport
import Logging
import Testing

extension PostgresTests {
    /// Opening a database: the schema, its version, the app it belongs to, the URL.
    @Suite struct PostgresSchemaTests {
        @Test func createsTheSchemaOnceAndReopens() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let first = try await openStorage(server)
            first.close()
            #expect(try server.sql("SELECT key || '=' || value FROM lockstep_meta ORDER BY key") == "app=counter\nschema_version=3")
            let second = try await openStorage(server)
            defer { second.close() }
            #expect(second.node > first.node)
            #expect(try server.sql("SELECT count(*) FROM lockstep_meta") == "2")
        }

        @Test func serversStartingTogetherMigrateOneAfterTheOther() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let storages = try await withThrowingTaskGroup(of: PostgresRoomStorage.self) { group in
                for _ in 0..<4 { group.addTask { try await openStorage(server) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(storages.map(\.node)).count == 4)
            for storage in storages { storage.close() }
        }

        @Test func refusesAnotherAppsDatabase() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let first = try await openStorage(server, app: "counter")
            first.close()
            await #expect(throws: StorageError.appMismatch(stored: "counter", running: "todos")) {
                try await openStorage(server, app: "todos")
            }
        }

        @Test func refusesANewerSchema() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            let first = try await openStorage(server)
            first.close()
            try server.sql("UPDATE lockstep_meta SET value = '99' WHERE key = 'schema_version'")
            do {
                _ = try await openStorage(server)
                Issue.record("opened a database of a newer schema")
            } catch let error as StorageError {
                guard case .database(let message) = error else { throw error }
                #expect(message.contains("schema version 99, newer than this server's 3"))
            }
        }

        @Test func refusesABadURL() async throws {
            for url in ["http://u@h:1/d", "postgres://h:1/d", "postgres://u@h:1/", "postgres://u@h:1/d?mode=x"] {
                do {
                    _ = try await PostgresRoomStorage(url: url, app: "counter", logger: .init(label: "test"))
                    Issue.record("accepted \(url)")
                } catch {
                    guard case .badURL = error else { throw error }
                }
            }
        }

        @Test func anUnreachableDatabaseFailsWithinTheTimeout() async throws {
            let server = try PostgresServer()
            let url = server.url
            server.stop()
            var configuration = PostgresRoomStorage.Configuration()
            configuration.operationTimeout = .milliseconds(500)
            do {
                _ = try await PostgresRoomStorage(url: url, app: "counter", configuration: configuration, logger: .init(label: "test"))
                Issue.record("opened a stopped database")
            } catch {
                guard case .unavailable = error else { throw error }
            }
        }
    }
}
