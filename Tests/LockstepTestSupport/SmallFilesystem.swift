import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tmpfs of a few bytes mounted on a new temporary directory: a real disk that fills up, for what a server does when
/// its data directory has no room left, and that can be given room again.
///
/// Needs root. ``remove()`` unmounts it and deletes the directory; call it from a `defer`.
public final class SmallFilesystem: Sendable {
    public let path: String

    /// True when this process can mount a tmpfs (root, a kernel that allows it).
    public static let isAvailable: Bool = {
        guard getuid() == 0, let probe = try? SmallFilesystem(bytes: 64 << 10) else { return false }
        probe.remove()
        return true
    }()

    /// Mounts a tmpfs of `bytes` bytes.
    public init(bytes: Int) throws {
        path = NSTemporaryDirectory() + "lockstep-small-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard NetworkNamespace.run("mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path]) == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw SmallFilesystemError.cannotMount(path)
        }
    }

    /// Gives it `bytes` bytes in all, keeping what it holds.
    public func grow(to bytes: Int) throws {
        guard NetworkNamespace.run("mount", ["-o", "remount,size=\(bytes)", path]) == 0 else {
            throw SmallFilesystemError.cannotMount(path)
        }
    }

    public func remove() {
        NetworkNamespace.run("umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }
}

public enum SmallFilesystemError: Error {
    case cannotMount(String)
}
