/// Why rooms cannot be stored or loaded; each message says what to check.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data directory cannot be created or written.
    case unwritableDirectory(path: String, reason: String)
    /// Another server already uses this data directory.
    case directoryInUse(path: String)
    /// SQLite refused an operation (a full disk, a read-only file, a damaged database).
    case database(String)

    public var description: String {
        switch self {
        case .unwritableDirectory(let path, let reason):
            "cannot write the data directory \(path): \(reason); check its permissions and free space, or run with --memory"
        case .directoryInUse(let path):
            "another lockstep server is using \(path); stop it or give this one another --data directory"
        case .database(let reason):
            "the room database failed: \(reason)"
        }
    }
}
