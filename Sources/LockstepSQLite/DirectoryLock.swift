import Glibc
import LockstepStorage
import Synchronization

/// An exclusive lock on a data directory, held while the server runs, so a second server cannot
/// interleave its writes with ours.
final class DirectoryLock: Sendable {
    /// The locked file, until `release`.
    private let descriptor: Mutex<Int32?>

    init(directory: String) throws(StorageError) {
        let path = directory + "/lockstep.lock"
        let file = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard file >= 0 else {
            throw .unwritableDirectory(path: directory, reason: String(cString: strerror(errno)))
        }
        guard flock(file, LOCK_EX | LOCK_NB) == 0 else {
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
