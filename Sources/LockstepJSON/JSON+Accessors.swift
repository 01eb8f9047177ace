import OrderedCollections

extension JSON {
    /// The member named `key` when this is an object that has it; `nil` otherwise, so lookups chain with `?`.
    public subscript(key: String) -> JSON? {
        guard case .object(let object) = self else { return nil }
        return object.members[key]
    }

    /// The element at `index` when this is an array and the index is in range; `nil` otherwise.
    public subscript(index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string payload, or `nil` for any other kind.
    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The number as an exact `Int`: integers, and doubles only when integral and in range.
    public var intValue: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value): return JSON.exactInt(value)
        default: return nil
        }
    }

    /// The number as a `Double`, whichever way it is stored.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The boolean payload, or `nil` for any other kind (no truthiness).
    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// The elements, or `nil` when this is not an array.
    public var arrayValue: [JSON]? {
        guard case .array(let value) = self else { return nil }
        return value
    }

    /// The members, or `nil` when this is not an object.
    public var objectValue: JSONObject? {
        guard case .object(let value) = self else { return nil }
        return value
    }

    /// Whether this is `null`, which `== nil` would not express on an optional.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value at `pointer`, or nil when it does not resolve.
    public func value(at pointer: JSONPointer) -> JSON? {
        try? PatchEngine.value(at: pointer, in: self)
    }
}
