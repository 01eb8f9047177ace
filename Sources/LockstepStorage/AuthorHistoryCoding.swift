import LockstepCore
import LockstepJSON

/// A room's ``AuthorHistory`` as JSON, inside its snapshots' history.
enum AuthorHistoryCoding {
    static func encode(_ authors: AuthorHistory) -> JSON {
        let records: [JSON] = authors.records.map { record in
            var object: JSONObject = [
                "version": .int(record.version), "author": .string(record.author), "forward": record.forward.json,
                "inverse": record.inverse.json,
            ]
            if let compensation = record.compensation { object["compensation"] = compensation }
            if let mine = record.mine { object["of"] = .int(mine.of); object["taking"] = .int(mine.taking) }
            if record.isUndoMine { object["undoMine"] = true }
            if record.undone { object["undone"] = true }
            if let taker = record.takenBackBy { object["takenBackBy"] = .int(taker) }
            return .object(object)
        }
        let redo: [JSON] = authors.redo.sorted { $0.key < $1.key }.map {
            ["author": .string($0.key), "versions": .array($0.value.map { .int($0) })]
        }
        return ["records": .array(records), "redo": .array(redo), "latestTime": .int(authors.latestTime)]
    }

    static func decode(_ json: JSON, depth: Int) throws -> AuthorHistory {
        let records = try (json["records"]?.arrayValue ?? []).map { entry throws in
            guard let version = entry["version"]?.intValue, let author = entry["author"]?.stringValue else {
                throw StorageError.database("a snapshot's author record has no version or author")
            }
            let mine = entry["of"]?.intValue.flatMap { of in entry["taking"]?.intValue.map { (of, $0) } }
            return AuthorHistory.Record(
                version: version, author: author, compensation: entry["compensation"],
                forward: try JSONPatch(json: entry["forward"] ?? .null),
                inverse: try JSONPatch(json: entry["inverse"] ?? .null), mine: mine,
                isUndoMine: entry["undoMine"] == true, undone: entry["undone"] == true,
                takenBackBy: entry["takenBackBy"]?.intValue)
        }
        var redo: [String: [Int]] = [:]
        for entry in json["redo"]?.arrayValue ?? [] {
            guard let author = entry["author"]?.stringValue else { continue }
            redo[author] = entry["versions"]?.arrayValue?.compactMap(\.intValue)
        }
        return AuthorHistory(
            depth: depth, records: records, redo: redo, latestTime: json["latestTime"]?.intValue ?? 0)
    }
}
