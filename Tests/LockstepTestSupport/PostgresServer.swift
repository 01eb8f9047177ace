import Foundation
import Glibc
import Synchronization

/// A throwaway PostgreSQL server for tests: its own data directory under /tmp, loopback only, on a free port, with
/// trust authentication and `fsync=off`. As root it runs as the `postgres` user (PostgreSQL refuses root).
///
/// Call ``stop()`` in a `defer`: the server is a separate process and outlives a test that forgets it.
public final class PostgresServer: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// The database created at start.
    public let database: String
    /// The temporary directory holding the data directory, the socket and the log.
    public let directory: String
    /// Addresses it listens on besides 127.0.0.1, for clients on other network paths (a network namespace's link).
    public let listenAddresses: [String]
    private let binaries: String
    private let stopped = Mutex(false)

    /// `postgres://postgres@127.0.0.1:PORT/DATABASE`.
    public var url: String { url(database: database) }

    public func url(database: String) -> String { "postgres://postgres@127.0.0.1:\(port)/\(database)" }

    /// Creates a data directory, starts the server and creates `database`; it also listens on `listenAddresses`,
    /// trusting clients on their subnets.
    public init(database: String = "lockstep", listenAddresses: [String] = []) throws(PostgresServerError) {
        guard let binaries = Self.findBinaries() else { throw .notInstalled }
        self.binaries = binaries
        self.database = database
        self.listenAddresses = listenAddresses
        var template = Array("/tmp/lockstep-pg-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw .failed("mkdtemp", String(cString: strerror(errno))) }
        directory = String(cString: created)
        port = try Self.freePort()
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else { throw .failed("getpwnam", "no postgres user") }
            chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        do {
            try run("/bin/cp", ["-a", try Self.template(binaries) + "/data", directory + "/data"])
            if !listenAddresses.isEmpty {
                let trust = "echo 'host all all samenet trust' >> '\(directory)/data/pg_hba.conf'"
                try run("/bin/sh", ["-c", trust])
            }
            try start()
            try sql("CREATE DATABASE \"\(database)\"", database: "postgres")
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Stops the server at once (`immediate` mode: like a crash, clients are cut off) and deletes its files.
    public func stop() {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        halt()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops the server as a crash would, without deleting anything; ``start()`` brings it back.
    public func halt() {
        _ = try? run(binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
    }

    /// Starts the server (after ``halt()``) on the same port, with the same data; returns when it accepts connections.
    public func start() throws(PostgresServerError) {
        let addresses = (["127.0.0.1"] + listenAddresses).joined(separator: ",")
        let options =
            "-c listen_addresses=\(addresses) -p \(port) -k \(directory) -c fsync=off -c max_connections=200"
        try run(binaries + "/pg_ctl", ["-D", directory + "/data", "-o", options, "-l", directory + "/log", "-w", "start"])
    }

    /// Halts and starts the server: every connection is lost; the data stays.
    public func restart() throws(PostgresServerError) {
        halt()
        try start()
    }

    /// Ends every other backend (every client's connection) while the server keeps running.
    public func terminateBackends() throws(PostgresServerError) {
        try sql(
            """
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
            """)
    }

    /// Waits, up to 30 s, until `query` answers `expected`: for a state PostgreSQL shows only when asked (a lock
    /// taken or waited on, a statement in a trap).
    public func waitUntil(_ what: String, _ query: String, answers expected: String) async throws {
        try await within(30, what) {
            while try await offThePool({ try self.sql(query) }) != expected {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Runs `statements` with psql in `database` (the one created at start by default); the output, unaligned and
    /// without headers: one row a line, columns separated by `|`.
    @discardableResult
    public func sql(_ statements: String, database: String? = nil) throws(PostgresServerError) -> String {
        try run(
            binaries + "/psql",
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", database ?? self.database, "-X", "-A", "-t",
                "-q", "-v", "ON_ERROR_STOP=1", "-c", statements,
            ],
            asPostgres: false)
    }

    @discardableResult
    private func run(
        _ executable: String, _ arguments: [String], asPostgres: Bool = true
    ) throws(PostgresServerError) -> String {
        try Self.run(executable, arguments, asPostgres: asPostgres, log: directory + "/log")
    }

    /// Runs `executable` to its end, as the `postgres` user when this process is root and `asPostgres`; its output,
    /// stderr included. A failure's error also holds the server's `log`.
    @discardableResult
    private static func run(
        _ executable: String, _ arguments: [String], asPostgres: Bool, log: String?
    ) throws(PostgresServerError) -> String {
        // The shell joins stderr to stdout (ChildProcess drops stderr) so a failure says why.
        let command = ([executable] + arguments).map(quoted).joined(separator: " ") + " 2>&1"
        let (launcher, launcherArguments) =
            asPostgres && getuid() == 0
            ? ("/usr/sbin/runuser", ["-u", "postgres", "--", "/bin/sh", "-c", command])
            : ("/bin/sh", ["-c", command])
        let child: ChildProcess
        do {
            child = try ChildProcess(executable: launcher, arguments: launcherArguments)
        } catch {
            throw .failed(executable, "\(error)")
        }
        let output = String(decoding: child.readToEnd(), as: UTF8.self)
        guard child.waitForExit() == 0 else {
            let log = log.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
            throw .failed(
                (executable as NSString).lastPathComponent, output + (log.isEmpty ? "" : "\nserver log:\n" + log))
        }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func quoted(_ argument: String) -> String {
        "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A data directory made by initdb once per test process and copied for each server (initdb takes seconds);
    /// deleted when the process exits.
    private static func template(_ binaries: String) throws(PostgresServerError) -> String {
        templateLock.lock()
        defer { templateLock.unlock() }
        if let templateDirectory { return templateDirectory }
        let directory = "/tmp/lockstep-pg-template-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        guard mkdir(directory, 0o700) == 0 else { throw .failed("mkdir", String(cString: strerror(errno))) }
        if getuid() == 0, let user = getpwnam("postgres") { chown(directory, user.pointee.pw_uid, user.pointee.pw_gid) }
        try run(
            binaries + "/initdb", ["-N", "-D", directory + "/data", "-U", "postgres", "--auth=trust", "-E", "UTF8"],
            asPostgres: true, log: nil)
        templateDirectory = directory
        atexit { if let directory = templateDirectory { try? FileManager.default.removeItem(atPath: directory) } }
        return directory
    }

    /// The newest /usr/lib/postgresql/VERSION/bin that has initdb.
    private static func findBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }

    /// A port the kernel just gave a socket bound to 127.0.0.1, released for the server to take.
    public static func freePort() throws(PostgresServerError) -> Int {
        do {
            let reserved = try ReservedPort()
            defer { reserved.release() }
            return reserved.port
        } catch {
            throw .failed(error.step, error.reason)
        }
    }
}

private let templateLock = NSLock()
nonisolated(unsafe) private var templateDirectory: String?

/// Why a throwaway PostgreSQL could not be run.
public enum PostgresServerError: Error, CustomStringConvertible {
    /// No /usr/lib/postgresql/*/bin/initdb: `apt-get install postgresql`.
    case notInstalled
    /// A step failed; its output (and the server's log).
    case failed(String, String)

    public var description: String {
        switch self {
        case .notInstalled: "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install postgresql"
        case .failed(let step, let output): "\(step) failed: \(output)"
        }
    }
}
