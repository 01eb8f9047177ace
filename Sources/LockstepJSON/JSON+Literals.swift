import OrderedCollections

extension JSON: ExpressibleByNilLiteral {
    /// Lets tests and reducers write `nil` for JSON `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSON: ExpressibleByBooleanLiteral {
    /// Lets states be written as literals.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSON: ExpressibleByIntegerLiteral {
    /// Integer literals stay exact integers.
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension JSON: ExpressibleByFloatLiteral {
    /// Float literals become doubles, even when integral (`1.0` stays a double).
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSON: ExpressibleByStringLiteral {
    /// Lets states be written as literals.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSON: ExpressibleByArrayLiteral {
    /// Lets states be written as literals.
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
}

extension JSON: ExpressibleByDictionaryLiteral {
    /// Builds an object in source order; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        var object = JSONObject()
        object.members.reserveCapacity(elements.count)
        for (key, value) in elements { object.members[key] = value }
        self = .object(object)
    }
}
