public import LockstepCore
import LockstepJSON

/// The undo and redo stacks, and who made each recent change, as JSON, for snapshots.
public enum HistoryCoding {
    public static func encode(_ history: History) -> [UInt8] {
        func entries(_ list: some Sequence<HistoryEntry>) -> JSON {
            .array(list.map { ["version": .int($0.version), "forward": $0.forward.json, "inverse": $0.inverse.json] })
        }
        let json: JSON = [
            "undo": entries(history.undoStack), "redo": entries(history.redoStack),
            "authors": AuthorHistoryCoding.encode(history.authors),
        ]
        return json.serialized()
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
