import Foundation
import LockstepJSON
import Testing

private struct Todo: Codable, Equatable {
    var id: Int
    var title: String
    var done: Bool
    var tags: [String]
    var note: String?
    var score: Double
}

private enum Action: Codable, Equatable {
    case add(title: String)
    case toggle(id: Int)
    case clear

    private enum CodingKeys: String, CodingKey { case type, title, id }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .type) {
        case "add": self = .add(title: try container.decode(String.self, forKey: .title))
        case "toggle": self = .toggle(id: try container.decode(Int.self, forKey: .id))
        case "clear": self = .clear
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown \(other)")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .add(let title):
            try container.encode("add", forKey: .type)
            try container.encode(title, forKey: .title)
        case .toggle(let id):
            try container.encode("toggle", forKey: .type)
            try container.encode(id, forKey: .id)
        case .clear:
            try container.encode("clear", forKey: .type)
        }
    }
}

private struct Widths: Codable, Equatable {
    var i8: Int8 = -8
    var i16: Int16 = -16
    var i32: Int32 = -32
    var i64: Int64 = .min
    var u: UInt = 7
    var u8: UInt8 = 8
    var u16: UInt16 = 16
    var u32: UInt32 = 32
    var u64: UInt64 = 64
    var float: Float = 0.1
    var nested: [[Int]] = [[1], [2, 3]]
    var map: [String: Int] = ["k": 1]
    var optional: Int? = nil
    var json: JSON = ["free": [1, "form"]]
}

private class Base: Codable {
    var base = 1
}

private final class Derived: Base {
    var extra = "x"
    private enum CodingKeys: String, CodingKey { case extra }

    override init() { super.init() }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        extra = try container.decode(String.self, forKey: .extra)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(extra, forKey: .extra)
        try super.encode(to: container.superEncoder())
    }
}

@Suite struct CodableTests {
    @Test func encodesStructsInKeyOrderAndOmitsNilOptionals() throws {
        let todo = Todo(id: 1, title: "t", done: false, tags: ["a"], note: nil, score: 1.5)
        let json = try JSON(encoding: todo)
        #expect(json.serialized() == Array(#"{"id":1,"title":"t","done":false,"tags":["a"],"score":1.5}"#.utf8))
        #expect(try json.decode(Todo.self) == todo)
        let noted = Todo(id: 2, title: "u", done: true, tags: [], note: "n", score: 0)
        #expect(try JSON(encoding: noted).decode() == noted)
    }

    @Test func roundTripsEnumsWithCustomCoding() throws {
        for action in [Action.add(title: "x"), .toggle(id: 3), .clear] {
            let json = try JSON(encoding: action)
            #expect(try json.decode(Action.self) == action)
        }
        #expect(try JSON(encoding: Action.toggle(id: 3)) == ["type": "toggle", "id": 3])
    }

    @Test func handlesEveryIntegerWidthFloatsAndNesting() throws {
        let value = Widths()
        let json = try JSON(encoding: value)
        #expect(json["i64"] == .int(Int.min))
        #expect(json["float"] == 0.1)
        #expect(json["nested"] == [[1], [2, 3]])
        #expect(json["optional"] == nil)
        #expect(json["json"] == ["free": [1, "form"]])
        #expect(try json.decode(Widths.self) == value)
    }

    @Test func bigUnsignedValuesBecomeDoubles() throws {
        #expect(try JSON(encoding: UInt64.max) == .double(Double(UInt64.max)))
        #expect(try JSON(encoding: UInt64(5)) == .int(5))
    }

    @Test func encodesTopLevelScalarsAndCollections() throws {
        #expect(try JSON(encoding: 5) == 5)
        #expect(try JSON(encoding: "s") == "s")
        #expect(try JSON(encoding: [1, 2]) == [1, 2])
        #expect(try JSON(encoding: Optional<Int>.none) == nil)
        #expect(try JSON(encoding: JSON.array([true])) == [true])
    }

    @Test func superEncoderAndDecoderRoundTrip() throws {
        let derived = Derived()
        derived.base = 9
        let json = try JSON(encoding: derived)
        #expect(json == ["extra": "x", "super": ["base": 9]])
        let back = try json.decode(Derived.self)
        #expect(back.base == 9 && back.extra == "x")
    }

    @Test func missingKeysAreKeyNotFoundWithThePath() throws {
        let json: JSON = ["todos": [["id": 1, "title": "t", "done": false, "tags": [], "score": 1]]]
        struct Wrapper: Decodable { var todos: [Todo] }
        #expect(try json.decode(Wrapper.self).todos.first?.score == 1.0)
        let broken: JSON = ["todos": [["id": 1, "done": false, "tags": [], "score": 1]]]
        do {
            _ = try broken.decode(Wrapper.self)
            Issue.record("decoding must fail")
        } catch DecodingError.keyNotFound(let key, let context) {
            #expect(key.stringValue == "title")
            #expect(context.codingPath.map(\.stringValue) == ["todos", "Index 0"])
        }
    }

    @Test func integersComeFromDoublesOnlyWhenExact() throws {
        #expect(try JSON.double(3.0).decode(Int.self) == 3)
        #expect(throws: DecodingError.self) { try JSON.double(3.5).decode(Int.self) }
        #expect(throws: DecodingError.self) { try JSON.int(300).decode(UInt8.self) }
        #expect(throws: DecodingError.self) { try JSON.int(-1).decode(UInt.self) }
        #expect(throws: DecodingError.self) { try JSON.string("1").decode(Int.self) }
        #expect(throws: DecodingError.self) { try JSON.null.decode(Int.self) }
        #expect(try JSON.int(2).decode(Double.self) == 2.0)
        #expect(try JSON.double(18_446_744_073_709_549_568.0).decode(UInt64.self) == 18_446_744_073_709_549_568)
        #expect(throws: DecodingError.self) { try JSON.double(9_223_372_036_854_775_808.0).decode(Int.self) }
        #expect(throws: DecodingError.self) { try JSON.double(18_446_744_073_709_551_616.0).decode(UInt64.self) }
        #expect(try JSON.double(-9_223_372_036_854_775_808.0).decode(Int.self) == Int.min)
        #expect(try JSON.double(-0.0).decode(Int.self) == 0)
        #expect(throws: DecodingError.self) { try JSON.double(.nan).decode(Int.self) }
        #expect(try JSON.null.decode(Int?.self) == nil)
    }

    @Test func typeMismatchCarriesTheCodingPath() {
        let json: JSON = ["id": "one", "title": "t", "done": false, "tags": [], "score": 1]
        do {
            _ = try json.decode(Todo.self)
            Issue.record("decoding must fail")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["id"])
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func jsonValuesGoThroughFoundationCoders() throws {
        let value: JSON = ["a": [1, 2.5, "x", true, nil], "b": ["c": [:]]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSON(parsing: [UInt8](data)) == value)
        #expect(try JSONDecoder().decode(JSON.self, from: data) == value)
    }
}
