import Logging
import PostgresNIO

/// Reads take their rows whole. postgres-nio's streaming form pauses the connection until its reader asks for the
/// next rows, and the end of a connection that arrives while it is paused (PostgreSQL restarting,
/// `pg_terminate_backend`, a failover) stops the process with a fatal error in the driver. Its collecting form asks
/// for every batch as it arrives, so a connection that ends fails the read instead.
extension PostgresConnection {
    /// Every row of `query`, decoded as `columns`.
    func rows<each Column: PostgresDecodable>(
        _ query: PostgresQuery, decoding columns: (repeat each Column).Type, logger: Logger
    ) async throws -> [(repeat each Column)] {
        try await collect(query, logger: logger).get().rows.map { try $0.decode(columns) }
    }

    /// The collecting form: a plain function, so that the asynchronous, streaming overload is not the one chosen.
    private func collect(_ query: PostgresQuery, logger: Logger) -> EventLoopFuture<PostgresQueryResult> {
        self.query(query, logger: logger)
    }
}

extension PostgresClient {
    /// Every row of `query` on one of the client's connections, decoded as `columns`.
    func rows<each Column: PostgresDecodable & Sendable>(
        _ query: PostgresQuery, decoding columns: (repeat each Column).Type, logger: Logger
    ) async throws -> [(repeat each Column)] {
        try await withConnection { try await $0.rows(query, decoding: (repeat each Column).self, logger: logger) }
    }
}
