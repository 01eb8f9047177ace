import LockstepJSON
import LockstepStorage
import Testing

/// A change's record, written straight into bytes, against the same document built as a `JSON` tree.
@Suite struct ChangeRecordTests {
    private static let inverse: JSONPatch = {
        // swiftlint:disable:next force_try
        try! JSONPatch(json: [["op": "replace", "path": "/count", "value": 4]])
    }()

    /// What ``ChangeRecord/serialized()`` wrote when it built the record as a tree.
    private static func treeEncoding(_ record: ChangeRecord) -> [UInt8] {
        var object: JSONObject = ["inverse": record.inverse.json]
        if let author = record.author { object["author"] = .string(author) }
        if let compensation = record.compensation { object["compensation"] = compensation }
        if let taking = record.taking { object["taking"] = .int(taking) }
        return JSON.object(object).serialized()
    }

    private static let records = [
        ChangeRecord(inverse: inverse, author: "session=a\"\\\u{1}é", compensation: ["add": -1]),
        ChangeRecord(inverse: inverse, author: "client-7", taking: 12),
        ChangeRecord(inverse: inverse, compensation: ["set": ["items": [1, "two"]]]),
    ]

    @Test(arguments: records) func theBytesAreTheTreesSerialization(record: ChangeRecord) {
        #expect(
            String(decoding: record.serialized(), as: UTF8.self)
                == String(decoding: Self.treeEncoding(record), as: UTF8.self))
    }

    @Test(arguments: records) func whatIsWrittenReadsBack(record: ChangeRecord) throws {
        #expect(try ChangeRecord(bytes: record.serialized()) == record)
    }

    @Test func aRecordWithoutAnAuthorIsItsInverseAlone() throws {
        let record = ChangeRecord(inverse: Self.inverse)
        #expect(record.serialized() == Self.inverse.serialized())
        #expect(try ChangeRecord(bytes: record.serialized()) == record)
    }
}
