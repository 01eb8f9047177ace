import Glibc

/// An exclusive lock on a data directory, held while the server runs, so a second server cannot
/// interleave its writes with ours.
final class DirectoryLock: Sendable {
    private let descriptor: Int32

    init(directory: String) throws(StorageError) {
        let path = directory + "/lockstep.lock"
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .unwritableDirectory(path: directory, reason: String(cString: strerror(errno)))
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw .directoryInUse(path: directory)
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
