import OrderedCollections

/// The `Decoder` behind `JSON.decode(_:)`: reads a `JSON` tree directly, no bytes involved.
struct JSONValueDecoder: Decoder {
    let value: JSON
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw Self.mismatch(JSONObject.self, value, codingPath)
        }
        return KeyedDecodingContainer(KeyedJSONDecodingContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw Self.mismatch([JSON].self, value, codingPath) }
        return UnkeyedJSONDecodingContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleJSONDecodingContainer(value: value, codingPath: codingPath)
    }

    static func mismatch(_ type: Any.Type, _ value: JSON, _ codingPath: [any CodingKey]) -> DecodingError {
        if case .null = value {
            return .valueNotFound(
                type, .init(codingPath: codingPath, debugDescription: "Expected \(type) but found null"))
        }
        return .typeMismatch(
            type, .init(codingPath: codingPath, debugDescription: "Expected \(type) but found \(value)"))
    }

    /// Decodes primitives and `JSON` without a nested decoder; the coding path is only built when needed.
    static func decode<T: Decodable>(
        _ type: T.Type, from value: JSON, codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        if T.self == JSON.self { return value as! T }
        if T.self == String.self { return try string(value, codingPath()) as! T }
        if T.self == Int.self { return try integer(Int.self, value, codingPath()) as! T }
        if T.self == Bool.self { return try bool(value, codingPath()) as! T }
        if T.self == Double.self { return try double(value, codingPath()) as! T }
        return try T(from: JSONValueDecoder(value: value, codingPath: codingPath()))
    }

    static func string(_ value: JSON, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let string) = value else { throw mismatch(String.self, value, codingPath()) }
        return string
    }

    static func bool(_ value: JSON, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, codingPath()) }
        return flag
    }

    static func double(_ value: JSON, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Double {
        switch value {
        case .double(let number): return number
        case .int(let number): return Double(number)
        default: throw mismatch(Double.self, value, codingPath())
        }
    }

    static func float(_ value: JSON, _ codingPath: @autoclosure () -> [any CodingKey]) throws -> Float {
        let number = try double(value, codingPath())
        let narrowed = Float(number)
        guard narrowed.isFinite || !number.isFinite else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath(), debugDescription: "\(number) does not fit in Float"))
        }
        return narrowed
    }

    /// Integers, and doubles only when they are whole and in range, so no value is silently rounded.
    static func integer<I: FixedWidthInteger>(
        _ type: I.Type, _ value: JSON, _ codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> I {
        switch value {
        case .int(let number):
            guard let exact = I(exactly: number) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: codingPath(), debugDescription: "\(number) does not fit in \(I.self)"))
            }
            return exact
        case .double(let number):
            guard let exact = JSON.exactInteger(number, as: I.self) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: codingPath(),
                        debugDescription: "\(number) is not a whole number that fits in \(I.self)"))
            }
            return exact
        default:
            throw mismatch(I.self, value, codingPath())
        }
    }
}

struct KeyedJSONDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object.members[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSON {
        guard let value = object.members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value for key \"\(key.stringValue)\""))
        }
        return value
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try JSONValueDecoder.bool(value(key), path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try JSONValueDecoder.string(value(key), path(key))
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try JSONValueDecoder.double(value(key), path(key))
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try JSONValueDecoder.float(value(key), path(key))
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    private func integer<I: FixedWidthInteger>(_ key: Key) throws -> I {
        try JSONValueDecoder.integer(I.self, value(key), path(key))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try JSONValueDecoder.decode(type, from: value(key), codingPath: path(key))
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONValueDecoder(value: value(key), codingPath: path(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoder(value: value(key), codingPath: path(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        let key = JSONCodingKey.superKey
        return JSONValueDecoder(value: object.members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoder(value: object.members[key.stringValue] ?? .null, codingPath: path(key))
    }
}

struct UnkeyedJSONDecodingContainer: UnkeyedDecodingContainer {
    let elements: [JSON]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSON], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var currentPath: [any CodingKey] { codingPath + [JSONCodingKey(intValue: currentIndex)] }

    private func current(_ type: Any.Type) throws -> JSON {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: currentPath, debugDescription: "The array has only \(elements.count) elements"))
        }
        return elements[currentIndex]
    }

    /// Decodes the current element and only then moves on, so a failed decode can be retried as another type.
    private mutating func next<T>(_ type: T.Type, _ read: (JSON, () -> [any CodingKey]) throws -> T) throws -> T {
        let result = try read(current(type)) { currentPath }
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard try current(JSON.self).isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        try next(type) { value, path in try JSONValueDecoder.bool(value, path()) }
    }
    mutating func decode(_ type: String.Type) throws -> String {
        try next(type) { value, path in try JSONValueDecoder.string(value, path()) }
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        try next(type) { value, path in try JSONValueDecoder.double(value, path()) }
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        try next(type) { value, path in try JSONValueDecoder.float(value, path()) }
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    private mutating func integer<I: FixedWidthInteger>() throws -> I {
        try next(I.self) { value, path in try JSONValueDecoder.integer(I.self, value, path()) }
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(type) { value, path in try JSONValueDecoder.decode(type, from: value, codingPath: path()) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { value, path in
            try JSONValueDecoder(value: value, codingPath: path()).container(keyedBy: type)
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { value, path in
            try JSONValueDecoder(value: value, codingPath: path()).unkeyedContainer()
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { value, path in JSONValueDecoder(value: value, codingPath: path()) }
    }
}

struct SingleJSONDecodingContainer: SingleValueDecodingContainer {
    let value: JSON
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try JSONValueDecoder.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try JSONValueDecoder.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try JSONValueDecoder.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try JSONValueDecoder.float(value, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try JSONValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try JSONValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try JSONValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try JSONValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try JSONValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try JSONValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try JSONValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try JSONValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try JSONValueDecoder.integer(type, value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try JSONValueDecoder.integer(type, value, codingPath) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONValueDecoder.decode(type, from: value, codingPath: codingPath)
    }
}
