import OrderedCollections

/// One value under construction. Containers write finished `JSON` into it directly; only containers opened
/// with `nestedContainer`/`superEncoder` are filled after they are attached, so those wait in `pending…`
/// until `resolve()`.
final class EncodingNode {
    enum Kind { case empty, single, keyed, unkeyed }

    var kind: Kind = .empty
    var single: JSON = .null
    var members: OrderedDictionary<String, JSON> = [:]
    var elements: [JSON] = []
    var pendingMembers: [(key: String, node: EncodingNode)] = []
    var pendingElements: [(index: Int, node: EncodingNode)] = []

    func attach(_ node: EncodingNode, forKey key: String) {
        members[key] = .null
        pendingMembers.append((key, node))
    }

    func append(_ node: EncodingNode) {
        pendingElements.append((elements.count, node))
        elements.append(.null)
    }

    func resolve() -> JSON {
        switch kind {
        case .empty: return .object(JSONObject())
        case .single: return single
        case .keyed:
            for (key, node) in pendingMembers where members[key] != nil { members[key] = node.resolve() }
            pendingMembers = []
            return .object(JSONObject(members))
        case .unkeyed:
            for (index, node) in pendingElements { elements[index] = node.resolve() }
            pendingElements = []
            return .array(elements)
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
            // Room for a typical small struct up front, so the first members do not regrow the storage.
            node.members = OrderedDictionary(minimumCapacity: 4)
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

    /// Encodes a nested value: primitives and `JSON` directly, everything else through a fresh node, which is
    /// complete once `encode(to:)` returns.
    static func encode<T: Encodable>(_ value: T, codingPath: @autoclosure () -> [any CodingKey]) throws -> JSON {
        if let primitive = primitive(value) { return primitive }
        let node = EncodingNode()
        try value.encode(to: JSONValueEncoder(node: node, codingPath: codingPath()))
        return node.resolve()
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

    private func put(_ value: JSON, _ key: Key) { node.members[key.stringValue] = value }

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
        node.attach(child, forKey: key.stringValue)
        return JSONValueEncoder(node: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        node.attach(child, forKey: key.stringValue)
        return JSONValueEncoder(node: child, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: JSONCodingKey.superKey) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    private func superEncoder(named key: some CodingKey) -> any Encoder {
        let child = EncodingNode()
        node.attach(child, forKey: key.stringValue)
        return JSONValueEncoder(node: child, codingPath: codingPath + [key])
    }
}

struct UnkeyedJSONEncodingContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    var count: Int { node.elements.count }

    private func put(_ value: JSON) { node.elements.append(value) }
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

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingNode()
        let key = nextKey
        node.append(child)
        return JSONValueEncoder(node: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        let key = nextKey
        node.append(child)
        return JSONValueEncoder(node: child, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let child = EncodingNode()
        let key = nextKey
        node.append(child)
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
        put(try JSONValueEncoder.encode(value, codingPath: codingPath))
    }
}
