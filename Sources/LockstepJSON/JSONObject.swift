public import OrderedCollections

/// A JSON object that keeps its members in insertion order, so serialization is deterministic.
public struct JSONObject: Sendable {
    @usableFromInline var members: OrderedDictionary<String, JSON>

    public init() { members = [:] }

    public init(_ members: OrderedDictionary<String, JSON>) { self.members = members }

    public subscript(key: String) -> JSON? {
        get { members[key] }
        set { members[key] = newValue }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: OrderedSet<String> { members.keys }
    public var values: OrderedDictionary<String, JSON>.Values { members.values }

    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSON? { members.removeValue(forKey: key) }
}

extension JSONObject: Sequence {
    public func makeIterator() -> OrderedDictionary<String, JSON>.Iterator { members.makeIterator() }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSON)...) {
        members = OrderedDictionary(elements, uniquingKeysWith: { _, last in last })
    }
}
