import LockstepJSON

/// Encodes a value one level deep: the members of a struct as typed values, not as JSON.
///
/// The differ compares those members by type and descends only into the ones that differ.
final class ShallowEncoder: Encoder {
    /// One member of a keyed encoding, still typed.
    struct Member {
        let key: String
        let value: any Encodable
    }

    /// What one level of a value looks like.
    enum Shape {
        case leaf(JSON)
        case wrapped(any Encodable)
        case keyed([Member])
        /// Unkeyed, nested or mixed containers: the differ compares the JSON instead.
        case opaque
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    private var members: [Member] = []
    private var single: Shape?
    private var isOpaque = false
    private var isKeyed = false

    /// The shape of `value`'s top level.
    static func shape(of value: some Encodable) throws -> Shape {
        let encoder = ShallowEncoder()
        try value.encode(to: encoder)
        if encoder.isOpaque || (encoder.isKeyed && encoder.single != nil) { return .opaque }
        if encoder.isKeyed { return .keyed(encoder.members) }
        return encoder.single ?? .opaque
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        isKeyed = true
        return KeyedEncodingContainer(KeyedContainer(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        isOpaque = true
        return OpaqueUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(encoder: self)
    }

    private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ShallowEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws {
            encoder.members.append(Member(key: key.stringValue, value: JSON.null))
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            encoder.members.append(Member(key: key.stringValue, value: value))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            encoder.isOpaque = true
            return ShallowEncoder().container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.isOpaque = true
            return OpaqueUnkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            encoder.isOpaque = true
            return ShallowEncoder()
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            encoder.isOpaque = true
            return ShallowEncoder()
        }
    }

    private struct SingleContainer: SingleValueEncodingContainer {
        let encoder: ShallowEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws {
            encoder.single = .leaf(.null)
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            if let leaf = LeafValue(value) {
                encoder.single = .leaf(leaf.json)
            } else {
                encoder.single = .wrapped(value)
            }
        }
    }

    /// Swallows what an unkeyed encoding writes; the shape is already `.opaque`.
    private struct OpaqueUnkeyedContainer: UnkeyedEncodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count = 0

        mutating func encodeNil() throws { count += 1 }
        mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            ShallowEncoder().container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { OpaqueUnkeyedContainer() }
        mutating func superEncoder() -> any Encoder { ShallowEncoder() }
    }
}
