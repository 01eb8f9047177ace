import LockstepTestSupport
import Testing

extension PostgresTests {
    /// The throwaway PostgreSQL the storage tests run against.
    @Suite struct PostgresServerTests {
        @Test func startsAnswersAndRestarts() throws {
            let server = try PostgresServer()
            defer { server.stop() }
            #expect(try server.sql("SELECT 1 + 1") == "2")
            try server.sql("CREATE TABLE t (x int); INSERT INTO t VALUES (7)")
            try server.restart()
            #expect(try server.sql("SELECT x FROM t") == "7")
            try server.terminateBackends()
        }
    }
}
