package import LockstepStorage
import LockstepTransport

/// Why a server cannot start. Every failure of ``SyncServer/init(configuration:storage:clock:logger:)`` and
/// ``SyncServer/run()`` is one of these (or an ``AccessError``), and each message says what to do about it.
public enum ServerError: Error, Sendable, Equatable {
    /// Another process listens on the port.
    case portInUse(host: String, port: Int)
    /// The address cannot be listened on for another reason (the system's): not an address of this machine, a
    /// port below 1024.
    case cannotListen(host: String, port: Int, reason: String)
    /// The TLS certificate or key cannot be read or used; the text says which file and why.
    case tlsFiles(String)
    /// Another server keeps its rooms in this data directory.
    case dataDirectoryLocked(path: String)
    /// The data directory cannot be created or written.
    case dataDirectoryUnwritable(path: String, reason: String)
    /// The shared database (PostgreSQL) does not answer.
    case databaseUnreachable(String)
    /// The shared database's URL cannot be used.
    case badDatabaseURL(String)
    /// The shared database's rooms were written by another app.
    case otherApp(stored: String, running: String)
    /// The data directory's rooms were written by another app.
    case otherAppsDataDirectory(path: String, stored: String, running: String)
    /// The stored rooms cannot be opened for another reason (a full disk, a damaged database).
    case storage(String)

    /// What went wrong and what to do, for a person.
    public var message: String {
        switch self {
        case .portInUse(let host, let port):
            "port \(port) on \(host) is already in use by another process: stop it, or choose another port "
                + "(--port, ServerConfiguration.port; 0 picks a free one)"
        case .cannotListen(let host, let port, let reason):
            "cannot listen on \(host):\(port): \(reason); the host must be an address of this machine (0.0.0.0 for "
                + "all of them), and ports below 1024 need privileges"
        case .tlsFiles(let reason):
            reason
        case .dataDirectoryLocked(let path):
            "another lockstep server is using the data directory \(path): stop it, or give this one another "
                + "directory (--data)"
        case .dataDirectoryUnwritable(let path, let reason):
            "cannot write the data directory \(path): \(reason); check its permissions and free space, or choose "
                + "another (--data)"
        case .databaseUnreachable(let reason):
            "the database cannot be reached: \(reason); check that PostgreSQL runs, and the host, port, user and "
                + "password of --postgres"
        case .badDatabaseURL(let reason):
            "bad --postgres URL: \(reason)"
        case .otherApp(let stored, let running):
            "the stored rooms belong to the app \(stored), not \(running): serve them with the app \(stored), "
                + "or use another data directory or database"
        case .otherAppsDataDirectory(let path, let stored, let running):
            "the data directory \(path) holds rooms of the app \(stored), not \(running): serve them with the app "
                + "\(stored), or give this server another directory (--data)"
        case .storage(let reason):
            reason
        }
    }
}

extension ServerError: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { message }
    /// An error left uncaught at the top of `main.swift` is printed with this: the message, not the enum.
    public var debugDescription: String { message }
}

extension ServerError {
    /// The storage failure that stops a server from starting.
    package init(_ error: StorageError) {
        switch error {
        case .directoryInUse(let path): self = .dataDirectoryLocked(path: path)
        case .unwritableDirectory(let path, let reason): self = .dataDirectoryUnwritable(path: path, reason: reason)
        case .unavailable(let reason): self = .databaseUnreachable(reason)
        case .badURL(let reason): self = .badDatabaseURL(reason)
        case .appMismatch(let stored, let running): self = .otherApp(stored: stored, running: running)
        case .directoryOfAnotherApp(let path, let stored, let running):
            self = .otherAppsDataDirectory(path: path, stored: stored, running: running)
        default: self = .storage(error.description)
        }
    }

    /// The transport failure that stops a server from starting.
    init(_ error: TransportError, host: String, port: Int) {
        switch error {
        case .addressInUse: self = .portInUse(host: host, port: port)
        case .cannotListen(_, _, let reason): self = .cannotListen(host: host, port: port, reason: reason)
        case .tlsSetupFailed(let reason): self = .tlsFiles(reason)
        default: self = .cannotListen(host: host, port: port, reason: error.message)
        }
    }
}
