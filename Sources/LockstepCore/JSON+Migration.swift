public import LockstepJSON

/// Edits a migration makes to a stored state, each throwing a ``StateEditError`` that names what did not fit.
extension JSON {
    /// Sets member `key` of this object to `value`, adding it at the end when it is new.
    public mutating func setMember(_ key: String, to value: JSON) throws(StateEditError) {
        guard case .object(var object) = self else { throw .notAnObject(key: key) }
        object[key] = value
        self = .object(object)
    }

    /// Renames member `key` to `newKey`, keeping its place; does nothing when the object has no `key`.
    public mutating func renameMember(_ key: String, to newKey: String) throws(StateEditError) {
        guard case .object(let object) = self else { throw .notAnObject(key: key) }
        guard object[key] != nil, key != newKey else { return }
        var renamed = JSONObject()
        for (name, value) in Array(object) where name != newKey { renamed[name == key ? newKey : name] = value }
        self = .object(renamed)
    }

    /// Removes member `key`; does nothing when the object has no `key`.
    public mutating func removeMember(_ key: String) throws(StateEditError) {
        guard case .object(var object) = self else { throw .notAnObject(key: key) }
        object.removeValue(forKey: key)
        self = .object(object)
    }

    /// Edits the value at `pointer` (an RFC 6901 JSON Pointer such as `/board/cards`) in place.
    public mutating func modify(
        _ pointer: String, _ body: (inout JSON) throws -> Void
    ) throws {
        let parsed: JSONPointer
        do {
            parsed = try JSONPointer(pointer)
        } catch {
            throw StateEditError.missing(pointer: pointer)
        }
        try modify(parsed.tokens[...], pointer: pointer, body)
    }

    /// Edits every element of the array, or every member value of the object, at `pointer`.
    public mutating func modifyEach(_ pointer: String, _ body: (inout JSON) throws -> Void) throws {
        try modify(pointer) { container throws in
            switch container {
            case .array(var elements):
                for index in elements.indices { try body(&elements[index]) }
                container = .array(elements)
            case .object(var object):
                for (key, value) in Array(object) {
                    var value = value
                    try body(&value)
                    object[key] = value
                }
                container = .object(object)
            default:
                throw StateEditError.notAContainer(pointer: pointer)
            }
        }
    }

    private mutating func modify(
        _ tokens: ArraySlice<String>, pointer: String, _ body: (inout JSON) throws -> Void
    ) throws {
        guard let token = tokens.first else { return try body(&self) }
        switch self {
        case .object(var object):
            guard var child = object[token] else { throw StateEditError.missing(pointer: pointer) }
            try child.modify(tokens.dropFirst(), pointer: pointer, body)
            object[token] = child
            self = .object(object)
        case .array(var elements):
            guard let index = JSONPointer.arrayIndex(token), elements.indices.contains(index) else {
                throw StateEditError.missing(pointer: pointer)
            }
            try elements[index].modify(tokens.dropFirst(), pointer: pointer, body)
            self = .array(elements)
        default:
            throw StateEditError.missing(pointer: pointer)
        }
    }
}
