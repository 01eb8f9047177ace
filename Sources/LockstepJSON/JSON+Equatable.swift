import OrderedCollections

extension JSON: Equatable {
    /// Compares as JSON does: numbers by value (`1 == 1.0`), strings by code units, objects ignoring member order.
    ///
    /// Arrays and objects that share storage compare equal without being walked, which keeps
    /// diffing a large, mostly unchanged state cheap.
    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        let identical = withUnsafePointer(to: lhs) { a in withUnsafePointer(to: rhs) { b in isIdentical(a, b) } }
        if identical { return true }
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.int(a), .double(b)): return exactInt(b) == a
        case let (.double(a), .int(b)): return exactInt(a) == b
        case let (.string(a), .string(b)): return utf8Equal(a, b)
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)): return a == b
        default: return false
        }
    }

    /// Byte equality: JSON strings are code-point sequences, so no Unicode normalization applies.
    @inlinable
    static func utf8Equal(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { a in
            rhs.withUTF8 { b in
                a.baseAddress == b.baseAddress || a.elementsEqual(b)
            }
        }
    }

    /// Hashes the UTF-8 bytes so hashing agrees with the byte equality above.
    static func hashUTF8(_ string: String, into hasher: inout Hasher) {
        var string = string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(0xFF as UInt8)
    }
}

extension JSON: Hashable {
    /// Hashes consistently with `==`: an integral double hashes like the equal integer.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .int(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value)
        case .double(let value):
            if let exact = JSON.exactInt(value) {
                hasher.combine(2 as UInt8)
                hasher.combine(exact)
            } else {
                hasher.combine(3 as UInt8)
                hasher.combine(value)
            }
        case .string(let value):
            hasher.combine(4 as UInt8)
            JSON.hashUTF8(value, into: &hasher)
        case .array(let elements):
            hasher.combine(5 as UInt8)
            hasher.combine(elements.count)
            for element in elements { element.hash(into: &hasher) }
        case .object(let object):
            hasher.combine(6 as UInt8)
            object.hash(into: &hasher)
        }
    }
}

extension JSON {
    /// Whether two stored values are bit-for-bit the same: the same case holding the same scalar or the
    /// same storage references. Such values are equal, so this settles most comparisons in a diff of a
    /// mostly unchanged state without retaining or walking anything. A `false` proves nothing.
    @inline(__always)
    static func isIdentical(_ lhs: UnsafePointer<JSON>, _ rhs: UnsafePointer<JSON>) -> Bool {
        let a = UnsafeRawPointer(lhs)
        let b = UnsafeRawPointer(rhs)
        let size = MemoryLayout<JSON>.size
        var offset = 0
        while offset + 8 <= size {
            guard a.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            else { return false }
            offset += 8
        }
        while offset < size {
            guard a.load(fromByteOffset: offset, as: UInt8.self) == b.load(fromByteOffset: offset, as: UInt8.self)
            else { return false }
            offset += 1
        }
        return true
    }
}
