import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An ext4 filesystem in a file, loop-mounted on a new temporary directory, that can be frozen (`fsfreeze`): while it
/// is, every write to it waits, so a server's write to its log stays in flight for as long as a test needs — a disk
/// that stalls, then a crash in the middle of a write.
///
/// Needs root, `mkfs.ext4` and loop devices. ``remove()`` thaws, unmounts and deletes it; call it from a `defer`.
public final class FreezableFilesystem: Sendable {
    public let path: String
    private let image: String

    /// True when this process can make, mount and freeze one.
    public static let isAvailable: Bool = {
        guard getuid() == 0, let probe = try? FreezableFilesystem() else { return false }
        defer { probe.remove() }
        guard probe.freeze() else { return false }
        return probe.thaw()
    }()

    /// Makes a 32 MiB filesystem and mounts it.
    public init() throws {
        let name = "lockstep-freezable-\(UUID().uuidString)"
        path = NSTemporaryDirectory() + name
        image = NSTemporaryDirectory() + name + ".img"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard NetworkNamespace.run("truncate", ["-s", "32M", image]) == 0,
            NetworkNamespace.run("mkfs.ext4", ["-q", "-F", image]) == 0,
            NetworkNamespace.run("mount", ["-o", "loop", image, path]) == 0
        else {
            try? FileManager.default.removeItem(atPath: image)
            try? FileManager.default.removeItem(atPath: path)
            throw FreezableFilesystemError.cannotMount(path)
        }
    }

    /// Every write to it waits from now on, until ``thaw()``; false when the kernel refused.
    @discardableResult
    public func freeze() -> Bool {
        NetworkNamespace.run("fsfreeze", ["--freeze", path]) == 0
    }

    /// The writes waiting go on.
    @discardableResult
    public func thaw() -> Bool {
        NetworkNamespace.run("fsfreeze", ["--unfreeze", path]) == 0
    }

    public func remove() {
        thaw()
        NetworkNamespace.run("umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: image)
    }
}

public enum FreezableFilesystemError: Error {
    case cannotMount(String)
}
