extension JSON {
    /// Moves the elements out, leaving `.null`, so the caller holds the only reference and can mutate
    /// without a copy-on-write copy. Put them back with `self = .array(elements)`.
    @inline(__always)
    mutating func takeArray() -> [JSON]? {
        guard case .array(let elements) = self else { return nil }
        self = .null
        return elements
    }

    /// Moves the members out, leaving `.null`; the object counterpart of `takeArray()`.
    @inline(__always)
    mutating func takeObject() -> JSONObject? {
        guard case .object(let object) = self else { return nil }
        self = .null
        return object
    }
}
