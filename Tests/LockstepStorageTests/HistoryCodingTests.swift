import LockstepCore
import LockstepJSON
import LockstepStorage
import Testing

/// A snapshot's history, written straight into bytes, against the same document built as a `JSON` tree.
@Suite struct HistoryCodingTests {
    private static func patch(_ op: String, _ path: String, _ value: JSON) -> JSONPatch {
        // swiftlint:disable:next force_try
        try! JSONPatch(json: [["op": .string(op), "path": .string(path), "value": value]])
    }

    /// Every kind of entry and record member: stacks on both sides, a compensation, an undo mine's and a redo
    /// mine's notes, flags, a redo list per author, and strings that need escaping.
    private static let history: History = {
        let entries = (1...5).map { version in
            HistoryEntry(
                version: version, forward: patch("replace", "/count", .int(version)),
                inverse: patch("replace", "/count", .int(version - 1)))
        }
        let records = [
            AuthorHistory.Record(
                version: 1, author: "session=a\"\\\u{1}é", compensation: ["add": -1], forward: entries[0].forward,
                inverse: entries[0].inverse),
            AuthorHistory.Record(
                version: 2, author: "client-7", compensation: nil, forward: entries[1].forward,
                inverse: entries[1].inverse, undone: true, takenBackBy: 3),
            AuthorHistory.Record(
                version: 3, author: "client-7", compensation: nil, forward: entries[2].forward,
                inverse: entries[2].inverse, mine: (of: 2, taking: 2), isUndoMine: true),
        ]
        return History(
            depth: 10, undo: entries.prefix(3), redo: Array(entries.suffix(2)),
            authors: AuthorHistory(
                depth: 10, records: records, redo: ["client-7": [3], "b": [1, 2]], latestTime: 1_764_000_000_000))
    }()

    /// What ``HistoryCoding/encode(_:)`` wrote when it built the document as a tree.
    private static func treeEncoding(_ history: History) -> [UInt8] {
        func entries(_ list: some Sequence<HistoryEntry>) -> JSON {
            .array(list.map { ["version": .int($0.version), "forward": $0.forward.json, "inverse": $0.inverse.json] })
        }
        let records: [JSON] = history.authors.records.map { record in
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
        let redo: [JSON] = history.authors.redo.sorted { $0.key < $1.key }.map {
            ["author": .string($0.key), "versions": .array($0.value.map { .int($0) })]
        }
        let authors: JSON = [
            "records": .array(records), "redo": .array(redo), "latestTime": .int(history.authors.latestTime),
        ]
        let json: JSON = [
            "undo": entries(history.undoStack), "redo": entries(history.redoStack), "authors": authors,
        ]
        return json.serialized()
    }

    @Test func theBytesAreTheTreesSerialization() {
        let bytes = HistoryCoding.encode(Self.history)
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: Self.treeEncoding(Self.history), as: UTF8.self))
    }

    @Test func anEmptyHistoryIsTheTreesSerializationToo() {
        let empty = History(depth: 10)
        #expect(HistoryCoding.encode(empty) == Self.treeEncoding(empty))
    }

    @Test func whatIsWrittenReadsBackAsTheSameHistory() throws {
        let decoded = try HistoryCoding.decode(HistoryCoding.encode(Self.history), depth: 10)
        #expect(decoded == Self.history)
    }
}
