import Foundation
import LockstepJSON
import Testing

/// One record of the json-patch-tests community suite.
struct SuiteRecord: CustomStringConvertible, Sendable {
    var file: String
    var index: Int
    var json: JSON

    var description: String { "\(file)#\(index) \(json["comment"]?.stringValue ?? "")" }

    static func load(_ name: String) throws -> [SuiteRecord] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Resources"))
        let data = try Data(contentsOf: url)
        let parsed = try JSON(parsing: [UInt8](data))
        let records = try #require(parsed.arrayValue)
        return records.enumerated().map { SuiteRecord(file: name, index: $0.offset, json: $0.element) }
    }

    static func all() -> [SuiteRecord] {
        ((try? load("tests")) ?? []) + ((try? load("spec_tests")) ?? [])
    }

    var isEnabled: Bool { json["doc"] != nil && json["patch"] != nil && json["disabled"]?.boolValue != true }
}

@Suite struct RFC6902SuiteTests {
    @Test func bothSuiteFilesLoadAndHaveEnabledRecords() throws {
        let tests = try SuiteRecord.load("tests")
        let spec = try SuiteRecord.load("spec_tests")
        #expect(tests.count > 80)
        #expect(spec.count > 10)
        let enabled = (tests + spec).filter(\.isEnabled)
        #expect(enabled.count > 90)
    }

    @Test(arguments: SuiteRecord.all().filter(\.isEnabled))
    func enabledRecordPasses(_ record: SuiteRecord) throws {
        let document = try #require(record.json["doc"])
        let patchJSON = try #require(record.json["patch"])
        if let expected = record.json["expected"] {
            let patch = try JSONPatch(json: patchJSON)
            var result = document
            let inverse = try patch.apply(to: &result)
            #expect(result == expected)
            #expect(try inverse.applied(to: result) == document)
        } else {
            #expect(record.json["error"] != nil, "a record has either expected or error")
            var result = document
            #expect(throws: JSONPatchError.self) {
                let patch = try JSONPatch(json: patchJSON)
                try patch.apply(to: &result)
            }
            #expect(result == document)
            #expect(result.serialized() == document.serialized(), "member order is restored too")
        }
    }
}
