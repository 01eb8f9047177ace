import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and writes one room's kept file in a ``KeepDirectory``: written to a temporary file, flushed to disk and
/// renamed over the old one, so a crash at any point leaves a whole file; a file the client cannot use is renamed
/// aside (kept for a person to look at) and logged, never trusted and never fatal.
struct RoomKeeper: Sendable {
    let directory: KeepDirectory
    /// The kept file's full path.
    let file: String
    let logger: Logger

    /// Prepares the file for `room` (and the followed `path`), creating the directory if needed.
    init(directory: KeepDirectory, room: String, path: String, logger: Logger) throws(RoomClientError) {
        self.directory = directory
        self.logger = logger
        do {
            try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        } catch {
            throw .cannotKeep("cannot create the directory \(directory.path): \(error.localizedDescription)")
        }
        file = (directory.path as NSString).appendingPathComponent(Self.fileName(room: room, path: path))
    }

    /// `ROOM.json`, or `ROOM%2Fboards%2F7.json` for a view of `/boards/7`: every byte outside `A-Z a-z 0-9 . _ -`
    /// escaped, so each room and path has a file of its own.
    static func fileName(room: String, path: String) -> String {
        var name = ""
        for byte in (room + path).utf8 {
            let scalar = Unicode.Scalar(byte)
            let character = Character(scalar)
            if byte < 0x80, character.isLetter || character.isNumber || "._-".contains(character) {
                name.unicodeScalars.append(scalar)
            } else {
                name += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return name + ".json"
    }

    /// The kept room, if there is a usable one for this room, path, app and session (`session` nil: the file's
    /// own). A file that is not usable is set aside, and nil returned.
    func load(room: String, path: String, session: String?) -> KeptRoom? {
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        let kept: KeptRoom
        do {
            kept = try KeptRoom(bytes: Array(data))
        } catch {
            setAside("\(error)")
            return nil
        }
        if kept.room != room || kept.path != path {
            setAside("it was kept for room \(kept.room)\(kept.path), not \(room)\(path)")
        } else if kept.app != directory.app {
            setAside("it was kept for the app \"\(kept.app)\", not \"\(directory.app)\"")
        } else if let session, kept.session != session {
            setAside("it was kept for the session \(kept.session), not \(session)")
        } else {
            return kept
        }
        return nil
    }

    /// Renames the file aside with a log line saying why; the client starts fresh.
    func setAside(_ reason: String) {
        let aside = "\(file).set-aside-\(Int(Date().timeIntervalSince1970 * 1000))"
        if rename(file, aside) == 0 {
            logger.warning("kept room \(file) set aside as \(aside): \(reason); starting fresh")
        } else {
            let failure = Self.errorText()
            logger.warning("kept room \(file) not used (and not renamed: \(failure)): \(reason); starting fresh")
        }
    }

    /// Replaces the file with `bytes`, atomically and durably: a temporary file, fsync, rename, then the directory.
    func replace(with bytes: [UInt8]) throws(RoomClientError) {
        let temporary = "\(file).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .cannotKeep("cannot write \(temporary): \(Self.errorText())") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + written, buffer.count - written)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = Self.errorText()
                close(descriptor)
                throw .cannotKeep("cannot write \(temporary): \(reason)")
            }
            written += count
        }
        guard fsync(descriptor) == 0 else {
            let reason = Self.errorText()
            close(descriptor)
            throw .cannotKeep("cannot flush \(temporary) to disk: \(reason)")
        }
        close(descriptor)
        guard rename(temporary, file) == 0 else { throw .cannotKeep("cannot replace \(file): \(Self.errorText())") }
        let directoryDescriptor = open(directory.path, O_RDONLY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}
