/// Why rooms cannot be stored or loaded; each message says what to check.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data directory cannot be created or written.
    case unwritableDirectory(path: String, reason: String)
    /// Another server already uses this data directory.
    case directoryInUse(path: String)
    /// SQLite refused an operation (a full disk, a read-only file, a damaged database).
    case database(String)
    /// The shared database cannot be reached; nothing was stored.
    case unavailable(String)
    /// A write's COMMIT was sent but its answer never came: it may or may not be stored, as reading will tell.
    case uncertain(String)
    /// The shared database holds rooms of another app: servers sharing a database run the same app.
    case appMismatch(stored: String, running: String)
    /// The data directory holds rooms of another app: its states would not decode, or would be changed by a reducer
    /// they were not written for.
    case directoryOfAnotherApp(path: String, stored: String, running: String)
    /// A stored room cannot be brought into memory: its snapshot is damaged, or its state (migrated to the app's state
    /// version) does not decode. Nothing of it is changed, so a server that can read it loads it as it was.
    case unloadableRoom(room: String, version: Int, reason: String)
    /// The shared database's URL cannot be used.
    case badURL(String)

    public var description: String {
        switch self {
        case .unwritableDirectory(let path, let reason):
            "cannot write the data directory \(path): \(reason); check its permissions and free space, or run with --memory"
        case .directoryInUse(let path):
            "another lockstep server is using \(path); stop it or give this one another --data directory"
        case .database(let reason):
            "the room database failed: \(reason)"
        case .unavailable(let reason):
            "the room database cannot be reached: \(reason)"
        case .uncertain(let reason):
            "the room database may or may not have stored a write: \(reason)"
        case .appMismatch(let stored, let running):
            "the database holds rooms of the app \(stored), not \(running): run --app \(stored), or use another database"
        case .directoryOfAnotherApp(let path, let stored, let running):
            "the data directory \(path) holds rooms of the app \(stored), not \(running): run --app \(stored), or give "
                + "this server another --data directory"
        case .unloadableRoom(let room, let version, let reason):
            "room \(room) (version \(version)) cannot be loaded: \(reason). It is kept as stored: a server whose app "
                + "can read it loads it"
        case .badURL(let reason):
            "bad --postgres URL: \(reason)"
        }
    }
}
