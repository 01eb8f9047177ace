import Foundation
import LockstepStorage
import PostgresNIO

/// Where the database is, from `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=require]`.
///
/// TLS is off unless the URL asks for it with `sslmode=require` (then the server's certificate is verified).
struct PostgresLocation: CustomStringConvertible {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String
    var requireTLS: Bool

    init(url text: String) throws(StorageError) {
        func bad(_ reason: String) -> StorageError {
            .badURL("\(reason) in \(Self.redacted(text)); expected postgres://USER[:PASSWORD]@HOST:PORT/DATABASE")
        }
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme) else {
            throw bad("not a postgres:// URL")
        }
        guard let host = url.host, !host.isEmpty else { throw bad("no host") }
        guard let user = url.user, !user.isEmpty else { throw bad("no user") }
        let database = String(url.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw bad("no database") }
        var requireTLS = false
        for item in url.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", "require"), ("sslmode", "verify-full"): requireTLS = true
            case ("sslmode", "disable"), ("sslmode", "prefer"), ("sslmode", "allow"): requireTLS = false
            default: throw bad("unknown parameter \(item.name)=\(item.value ?? "")")
            }
        }
        self.host = host
        port = url.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        password = url.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        self.requireTLS = requireTLS
    }

    var clientConfiguration: PostgresClient.Configuration {
        PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database,
            tls: requireTLS ? .require(.makeClientConfiguration()) : .disable)
    }

    /// For the listening connection, which is not pooled.
    var connectionConfiguration: PostgresConnection.Configuration {
        get throws(StorageError) {
            guard requireTLS else {
                return PostgresConnection.Configuration(
                    host: host, port: port, username: user, password: password, database: database, tls: .disable)
            }
            do {
                let context = try NIOSSLContext(configuration: .makeClientConfiguration())
                return PostgresConnection.Configuration(
                    host: host, port: port, username: user, password: password, database: database,
                    tls: .require(context))
            } catch {
                throw .badURL("cannot set up TLS for \(description): \(error)")
            }
        }
    }

    /// The URL without its password, for logs and errors.
    var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    private static func redacted(_ text: String) -> String {
        guard var url = URLComponents(string: text), url.password != nil else { return text }
        url.password = "***"
        return url.string ?? text
    }
}
