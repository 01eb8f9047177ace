public import LockstepCore
import LockstepJSON

/// The undo and redo stacks, and who made each recent change, as JSON, for snapshots.
public enum HistoryCoding {
    public static func encode(_ history: History) -> [UInt8] {
        func write(_ entry: HistoryEntry, into bytes: inout [UInt8]) {
            JSONObjectWriter.object(into: &bytes) { object in
                object.member("version", .int(entry.version))
                object.member("forward", entry.forward)
                object.member("inverse", entry.inverse)
            }
        }
        var object = JSONObjectWriter()
        object.member("undo", each: history.undoStack, write)
        object.member("redo", each: history.redoStack, write)
        object.member("authors") { AuthorHistoryCoding.encode(history.authors, into: &$0) }
        return object.finished()
    }

    /// Reads stacks written by ``encode(_:)``, bounded by `depth` (the server's current `--undo-depth`).
    public static func decode(_ bytes: [UInt8], depth: Int) throws -> History {
        let json = try JSON(parsing: bytes)
        func entries(_ key: String) throws -> [HistoryEntry] {
            guard case .array(let list)? = json[key] else {
                throw StorageError.database("a snapshot has no \(key) list")
            }
            return try list.map { entry in
                guard let version = entry["version"]?.intValue else {
                    throw StorageError.database("a snapshot's history entry has no version")
                }
                return HistoryEntry(
                    version: version,
                    forward: try JSONPatch(json: entry["forward"] ?? .null),
                    inverse: try JSONPatch(json: entry["inverse"] ?? .null)
                )
            }
        }
        return History(
            depth: depth, undo: try entries("undo"), redo: try entries("redo"),
            authors: try json["authors"].map { try AuthorHistoryCoding.decode($0, depth: depth) })
    }
}
