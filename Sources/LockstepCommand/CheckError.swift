import LockstepStorage

/// Why `lockstep check` could not read the stored rooms at all (exit status 2).
enum CheckError: Error, CustomStringConvertible {
    /// A server is using the data directory: it may be writing while the check reads.
    case directoryInUse(path: String)
    /// The data directory does not exist.
    case noDirectory(path: String)
    /// The storage refused to be read.
    case storage(StorageError)

    var description: String {
        switch self {
        case .directoryInUse(let path):
            "a lockstep server is using \(path): stop it first, or check a copy made while it runs with "
                + "sqlite3 \(path)/rooms.sqlite \".backup COPY/rooms.sqlite\" (then --data COPY)"
        case .noDirectory(let path):
            "there is no data directory at \(path); give the one the server runs with (--data DIR)"
        case .storage(.appMismatch(let stored, let running)):
            "the database holds rooms of the app \(stored), not \(running): check them with --app \(stored)"
        case .storage(.directoryOfAnotherApp(let path, let stored, let running)):
            "the data directory \(path) holds rooms of the app \(stored), not \(running): check them with "
                + "--app \(stored)"
        case .storage(let error):
            error.description
        }
    }
}
