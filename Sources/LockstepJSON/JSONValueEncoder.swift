import OrderedCollections

/// One value under construction. Containers write into it; `resolve()` turns the finished tree into `JSON`.
///
/// Only values that open a container get a node; primitives go straight into their parent as `JSON`.
final class EncodingNode {
    enum Kind { case empty, single, keyed, unkeyed }
    enum Child {
        case value(JSON)
        case node(EncodingNode)
    }

    var kind: Kind = .empty
    var single: JSON = .null
    var members: OrderedDictionary<String, Child> = [:]
    var elements: [Child] = []

    func resolve() -> JSON {
        switch kind {
        case .empty: return .object(JSONObject())
        case .single: return single
        case .keyed:
            var object = OrderedDictionary<String, JSON>(minimumCapacity: members.count)
            for (key, child) in members { object[key] = child.resolved }
            return .object(JSONObject(object))
        case .unkeyed:
            return .array(elements.map(\.resolved))
        }
    }
}

extension EncodingNode.Child {
    var resolved: JSON {
        switch self {
        case .value(let value): value
        case .node(let node): node.resolve()
        }
    }
}

/// A coding key for array positions, `super`, and object members read back as keys.
struct JSONCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    static let superKey = JSONCodingKey(stringValue: "super")
}

/// The `Encoder` behind `JSON(encoding:)`: a two-word struct, so passing it as `any Encoder` does not box.
struct JSONValueEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.kind != .keyed {
            node.kind = .keyed
            node.members = [:]
        }
        return KeyedEncodingContainer(KeyedJSONEncodingContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.kind != .unkeyed {
            node.kind = .unkeyed
            node.elements = []
        }
        return UnkeyedJSONEncodingContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleJSONEncodingContainer(node: node, codingPath: codingPath)
    }

    /// Encodes a nested value: primitives and `JSON` directly, everything else through a fresh node.
    static func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> EncodingNode.Child {
        if let primitive = primitive(value) { return .value(primitive) }
        let node = EncodingNode()
        try value.encode(to: JSONValueEncoder(node: node, codingPath: codingPath))
        if node.kind == .single { return .value(node.single) }
        return .node(node)
    }

    static func primitive<T: Encodable>(_ value: T) -> JSON? {
        if T.self == JSON.self { return (value as! JSON) }
        if T.self == String.self { return .string(value as! String) }
        if T.self == Int.self { return .int(value as! Int) }
        if T.self == Bool.self { return .bool(value as! Bool) }
        if T.self == Double.self { return .double(value as! Double) }
        return nil
    }

    static func number(_ value: UInt64) -> JSON {
        value <= UInt64(Int.max) ? .int(Int(value)) : .double(Double(value))
    }

    static func number(_ value: Float) -> JSON {
        // The float's own shortest text, so 0.1 as Float stays 0.1 rather than 0.10000000149011612.
        guard value.isFinite, let double = Double(value.description) else { return .double(Double(value)) }
        return .double(double)
    }
}

struct KeyedJSONEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    private func put(_ value: JSON, _ key: Key) { node.members[key.stringValue] = .value(value) }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(JSONValueEncoder.number(value), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.int(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.int(Int(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.int(Int(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.int(Int(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.int(Int(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(JSONValueEncoder.number(UInt64(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.int(Int(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.int(Int(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.int(Int(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(JSONValueEncoder.number(value), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.members[key.stringValue] = try JSONValueEncoder.encode(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingNode()
        node.members[key.stringValue] = .node(child)
        return JSONValueEncoder(node: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        node.members[key.stringValue] = .node(child)
        return JSONValueEncoder(node: child, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: JSONCodingKey.superKey) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    private func superEncoder(named key: some CodingKey) -> any Encoder {
        let child = EncodingNode()
        node.members[key.stringValue] = .node(child)
        return JSONValueEncoder(node: child, codingPath: codingPath + [key])
    }
}

struct UnkeyedJSONEncodingContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    var count: Int { node.elements.count }

    private func put(_ value: JSON) { node.elements.append(.value(value)) }
    private var nextKey: JSONCodingKey { JSONCodingKey(intValue: node.elements.count) }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(JSONValueEncoder.number(value)) }
    mutating func encode(_ value: Int) throws { put(.int(value)) }
    mutating func encode(_ value: Int8) throws { put(.int(Int(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(Int(value))) }
    mutating func encode(_ value: UInt) throws { put(JSONValueEncoder.number(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { put(.int(Int(value))) }
    mutating func encode(_ value: UInt16) throws { put(.int(Int(value))) }
    mutating func encode(_ value: UInt32) throws { put(.int(Int(value))) }
    mutating func encode(_ value: UInt64) throws { put(JSONValueEncoder.number(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        node.elements.append(try JSONValueEncoder.encode(value, codingPath: codingPath + [nextKey]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingNode()
        let key = nextKey
        node.elements.append(.node(child))
        return JSONValueEncoder(node: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        let key = nextKey
        node.elements.append(.node(child))
        return JSONValueEncoder(node: child, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let child = EncodingNode()
        let key = nextKey
        node.elements.append(.node(child))
        return JSONValueEncoder(node: child, codingPath: codingPath + [key])
    }
}

struct SingleJSONEncodingContainer: SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    private func put(_ value: JSON) {
        node.kind = .single
        node.single = value
    }

    mutating func encodeNil() throws { put(.null) }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(.double(value)) }
    mutating func encode(_ value: Float) throws { put(JSONValueEncoder.number(value)) }
    mutating func encode(_ value: Int) throws { put(.int(value)) }
    mutating func encode(_ value: Int8) throws { put(.int(Int(value))) }
    mutating func encode(_ value: Int16) throws { put(.int(Int(value))) }
    mutating func encode(_ value: Int32) throws { put(.int(Int(value))) }
    mutating func encode(_ value: Int64) throws { put(.int(Int(value))) }
    mutating func encode(_ value: UInt) throws { put(JSONValueEncoder.number(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { put(.int(Int(value))) }
    mutating func encode(_ value: UInt16) throws { put(.int(Int(value))) }
    mutating func encode(_ value: UInt32) throws { put(.int(Int(value))) }
    mutating func encode(_ value: UInt64) throws { put(JSONValueEncoder.number(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        put(try JSONValueEncoder.encode(value, codingPath: codingPath).resolved)
    }
}
