import LockstepPostgres
import LockstepStorage
import LockstepTestSupport
import Synchronization
import Testing

extension PostgresTests {
    /// PostgreSQL ends connections in the middle of reads (a restart, `pg_terminate_backend`, a failover): the read
    /// fails with a storage error and the process goes on. A row stream that waited for its reader when the end of
    /// its connection arrived stopped the process with a fatal error in the driver, so every read takes its rows as
    /// they arrive.
    @Suite struct PostgresCutReadTests {
        static let rows = 40_000

        @Test func aReadCutOffWhileItsRowsArriveFailsAndTheProcessGoesOn() async throws {
            let server = try PostgresServer()
            defer { server.stop() }
            // A read may also wait for a connection while the pool makes new ones, and then fail at its deadline.
            let storage = try await openStorage(server, operationTimeout: .seconds(10))
            defer { storage.close() }
            try server.sql(
                """
                INSERT INTO changes (room, version, message, inverse)
                SELECT 'big', g, convert_to(repeat('x', 2000), 'UTF8'), '\\x' FROM generate_series(1, \(Self.rows)) g
                """)
            var cut = 0
            for _ in 0..<5 {
                let finished = Atomic(false)
                let read = Task {
                    defer { finished.store(true, ordering: .releasing) }
                    return try await storage.changes(room: "big", after: 0, through: .max, limit: .max).count
                }
                let running = """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE state = 'active' AND query LIKE 'SELECT version, message, inverse FROM changes%'
                    """
                while !finished.load(ordering: .acquiring), try await offThePool({ try server.sql(running) }) != "1" {}
                try await offThePool { try server.terminateBackends() }
                switch await read.result {
                case .success(let count):
                    #expect(count == Self.rows, "a read that ends reads every row")
                case .failure(let error):
                    #expect(error is StorageError, "\(error)")
                    cut += 1
                }
            }
            print("reads cut off: \(cut) of 5")
            let last = { try? await storage.changes(room: "big", after: Self.rows - 1, through: .max, limit: 5).count }
            #expect(await eventually(within: .seconds(60)) { await last() == 1 }, "the storage reads again")
        }
    }
}
