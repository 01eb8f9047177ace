import LockstepCore
import LockstepJSON

/// A room's ``AuthorHistory`` as JSON, inside its snapshots' history.
enum AuthorHistoryCoding {
    static func encode(_ authors: AuthorHistory, into bytes: inout [UInt8]) {
        JSONObjectWriter.object(into: &bytes) { object in
            object.member("records", each: authors.records) { record, bytes in
                JSONObjectWriter.object(into: &bytes) { object in
                    object.member("version", .int(record.version))
                    object.member("author", .string(record.author))
                    object.member("forward", record.forward)
                    object.member("inverse", record.inverse)
                    if let compensation = record.compensation { object.member("compensation", compensation) }
                    if let mine = record.mine {
                        object.member("of", .int(mine.of))
                        object.member("taking", .int(mine.taking))
                    }
                    if record.isUndoMine { object.member("undoMine", true) }
                    if record.undone { object.member("undone", true) }
                    if let taker = record.takenBackBy { object.member("takenBackBy", .int(taker)) }
                }
            }
            object.member("redo", each: authors.redo.sorted { $0.key < $1.key }) { entry, bytes in
                JSONObjectWriter.object(into: &bytes) { object in
                    object.member("author", .string(entry.key))
                    object.member("versions", .array(entry.value.map { .int($0) }))
                }
            }
            object.member("latestTime", .int(authors.latestTime))
        }
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
