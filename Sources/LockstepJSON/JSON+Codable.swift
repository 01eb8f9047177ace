import OrderedCollections

extension JSON {
    /// Converts a Swift value to JSON without going through bytes; keys keep their encoding order and
    /// `nil` optionals encoded with `encodeIfPresent` (the synthesized default) are omitted.
    ///
    /// Integers of every width stay exact; `UInt64` values above `Int.max` become doubles.
    public init(encoding value: some Encodable) throws {
        self = try JSONValueEncoder.encode(value, codingPath: [])
    }

    /// Converts this JSON to a Swift value; failures are `DecodingError`s carrying the coding path.
    ///
    /// Integers are read from doubles only when the double is whole and in range.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try JSONValueDecoder.decode(type, from: self, codingPath: [])
    }
}

extension JSON: Codable {
    /// Decodes any value a decoder can describe, so JSON can be a field of other `Codable` types.
    public init(from decoder: any Decoder) throws {
        if let direct = decoder as? JSONValueDecoder {
            self = direct.value
            return
        }
        if let keyed = try? decoder.container(keyedBy: JSONCodingKey.self) {
            var object = JSONObject()
            for key in keyed.allKeys { object[key.stringValue] = try keyed.decode(JSON.self, forKey: key) }
            self = .object(object)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var elements: [JSON] = []
            while !unkeyed.isAtEnd { elements.append(try unkeyed.decode(JSON.self)) }
            self = .array(elements)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let flag = try? single.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? single.decode(Int.self) {
            self = .int(integer)
        } else if let number = try? single.decode(Double.self) {
            self = .double(number)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// Encodes as the value itself (an object as a keyed container, and so on) through any encoder.
    public func encode(to encoder: any Encoder) throws {
        if let direct = encoder as? JSONValueEncoder {
            direct.node.kind = .single
            direct.node.single = self
            return
        }
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .int(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .double(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .string(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let object):
            var container = encoder.container(keyedBy: JSONCodingKey.self)
            for (key, member) in object { try container.encode(member, forKey: JSONCodingKey(stringValue: key)) }
        }
    }
}

extension JSONObject: Codable {
    /// Decodes an object through any decoder.
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSON(from: decoder) else {
            throw DecodingError.typeMismatch(
                JSONObject.self, .init(codingPath: decoder.codingPath, debugDescription: "Expected a JSON object"))
        }
        self = object
    }

    /// Encodes the members in order through any encoder.
    public func encode(to encoder: any Encoder) throws { try JSON.object(self).encode(to: encoder) }
}
