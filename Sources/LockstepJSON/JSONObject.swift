public import OrderedCollections

/// A JSON object that keeps its members in insertion order, so serialization is deterministic.
public struct JSONObject: Sendable {
    @usableFromInline var members: OrderedDictionary<String, JSON>

    /// An empty object, the usual starting point of a state built in code.
    public init() { members = [:] }

    /// Wraps existing ordered members without copying them.
    public init(_ members: OrderedDictionary<String, JSON>) { self.members = members }

    /// Reads or writes a member; writing `nil` removes it, writing an existing key keeps its position.
    public subscript(key: String) -> JSON? {
        get { members[key] }
        set { members[key] = newValue }
    }

    /// The number of members, without walking them.
    public var count: Int { members.count }
    /// Whether the object has no members, without walking them.
    public var isEmpty: Bool { members.isEmpty }
    /// The member names in serialization order.
    public var keys: OrderedSet<String> { members.keys }
    /// The member values in serialization order.
    public var values: OrderedDictionary<String, JSON>.Values { members.values }

    /// Removes a member and hands back its value so callers can undo or move it.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSON? { members.removeValue(forKey: key) }

    /// Whether both objects are the same storage, which proves equality without looking at any member.
    @inlinable
    func sharesStorage(with other: JSONObject) -> Bool {
        let sameKeys = members.keys.elements.withUnsafeBufferPointer { lhs in
            other.members.keys.elements.withUnsafeBufferPointer { rhs in
                lhs.baseAddress == rhs.baseAddress && lhs.count == rhs.count
            }
        }
        guard sameKeys else { return false }
        return members.values.elements.withUnsafeBufferPointer { lhs in
            other.members.values.elements.withUnsafeBufferPointer { rhs in
                lhs.baseAddress == rhs.baseAddress && lhs.count == rhs.count
            }
        }
    }
}

extension JSONObject: Sequence {
    /// Iterates members in serialization order.
    public func makeIterator() -> OrderedDictionary<String, JSON>.Iterator { members.makeIterator() }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Builds an object in source order; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        members = OrderedDictionary(elements, uniquingKeysWith: { _, last in last })
    }
}

extension JSONObject: Equatable {
    /// Objects are equal when they hold the same names with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.sharesStorage(with: rhs) { return true }
        let lhsKeys = lhs.members.keys.elements
        let rhsKeys = rhs.members.keys.elements
        let lhsValues = lhs.members.values.elements
        let rhsValues = rhs.members.values.elements
        for index in lhsKeys.indices {
            let key = lhsKeys[index]
            if rhsKeys[index] == key {
                guard lhsValues[index] == rhsValues[index] else { return false }
            } else {
                guard let other = rhs.members[key], other == lhsValues[index] else { return false }
            }
        }
        return true
    }
}

extension JSONObject: Hashable {
    /// Hashes members independently of their order, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        var combined: UInt = 0
        for (key, value) in members {
            var memberHasher = Hasher()
            JSON.hashUTF8(key, into: &memberHasher)
            value.hash(into: &memberHasher)
            combined &+= UInt(bitPattern: memberHasher.finalize())
        }
        hasher.combine(combined)
    }
}
