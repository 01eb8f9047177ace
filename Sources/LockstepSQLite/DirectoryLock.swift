import Glibc
import LockstepStorage
import Synchronization

/// A lock on a data directory: exclusive while a server runs, so a second server cannot interleave its writes with
/// ours; shared while a reader (`lockstep check`) reads it, so no server writes meanwhile and readers do not exclude
/// each other.
final class DirectoryLock: Sendable {
    /// The locked file, until `release`.
    private let descriptor: Mutex<Int32?>

    /// Takes the lock at once, or throws `StorageError.directoryInUse`: a server holds it, or (`shared`
    /// false) any reader does.
    init(directory: String, shared: Bool = false) throws(StorageError) {
        let path = directory + "/lockstep.lock"
        // A reader needs no write permission on an existing lock file: flock works on a read-only descriptor.
        let file = open(path, (shared ? O_RDONLY : O_RDWR) | O_CREAT | O_CLOEXEC, 0o644)
        guard file >= 0 else {
            throw .unwritableDirectory(path: directory, reason: String(cString: strerror(errno)))
        }
        guard flock(file, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else {
            close(file)
            throw .directoryInUse(path: directory)
        }
        descriptor = Mutex(file)
    }

    /// Lets another server use the directory; safe to call more than once.
    func release() {
        descriptor.withLock { file in
            guard let open = file else { return }
            flock(open, LOCK_UN)
            close(open)
            file = nil
        }
    }

    deinit {
        release()
    }
}
