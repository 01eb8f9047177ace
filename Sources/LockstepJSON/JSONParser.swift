import OrderedCollections

/// A strict RFC 8259 parser over raw bytes.
///
/// Iterative, with an explicit container stack, so hostile nesting hits `maxDepth` and never the call stack.
struct JSONParser {
    private let base: UnsafePointer<UInt8>
    private let end: Int
    private let maxDepth: Int
    private var position = 0
    private var scratch: [UInt8] = []

    /// One open container. Its pending items live on the shared `values`/`keys` stacks from `valueStart`
    /// and `keyStart`, so each container is allocated once, at its final size, when it closes.
    private struct Frame {
        var isObject: Bool
        var valueStart: Int
        var keyStart: Int
    }

    private init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.base = base
        self.end = count
        self.maxDepth = maxDepth
    }

    static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int) throws(JSONParseError) -> JSON {
        guard let address = bytes.baseAddress, bytes.count > 0 else {
            throw JSONParseError(offset: 0, reason: .unexpectedEndOfInput)
        }
        var parser = JSONParser(
            base: address.assumingMemoryBound(to: UInt8.self), count: bytes.count, maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    private func fail(_ reason: JSONParseError.Reason, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? position, reason: reason)
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while position < end {
            let byte = base[position]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            position += 1
        }
    }

    private mutating func parseDocument() throws(JSONParseError) -> JSON {
        var frames: [Frame] = []
        var values: [JSON] = []
        var keys: [String] = []
        nextValue: while true {
            skipWhitespace()
            guard position < end else { throw fail(.unexpectedEndOfInput) }
            var value: JSON
            switch base[position] {
            case UInt8(ascii: "{"):
                guard frames.count < maxDepth else { throw fail(.depthLimitExceeded(maxDepth)) }
                position += 1
                skipWhitespace()
                if position < end && base[position] == UInt8(ascii: "}") {
                    position += 1
                    value = .object(JSONObject())
                } else {
                    frames.append(Frame(isObject: true, valueStart: values.count, keyStart: keys.count))
                    keys.append(try parseKey())
                    continue nextValue
                }
            case UInt8(ascii: "["):
                guard frames.count < maxDepth else { throw fail(.depthLimitExceeded(maxDepth)) }
                position += 1
                skipWhitespace()
                if position < end && base[position] == UInt8(ascii: "]") {
                    position += 1
                    value = .array([])
                } else {
                    frames.append(Frame(isObject: false, valueStart: values.count, keyStart: keys.count))
                    continue nextValue
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = try parseNumber()
            case UInt8(ascii: "N"), UInt8(ascii: "I"):
                throw fail(.invalidLiteral)
            case let byte:
                throw fail(byte >= 0x80 ? .invalidUTF8 : .unexpectedByte(byte))
            }
            // Attach the finished value to its parent, closing every container that ends here.
            while let frame = frames.last {
                values.append(value)
                skipWhitespace()
                guard position < end else { throw fail(.unexpectedEndOfInput) }
                let byte = base[position]
                position += 1
                if frame.isObject {
                    if byte == UInt8(ascii: ",") {
                        skipWhitespace()
                        keys.append(try parseKey())
                        continue nextValue
                    }
                    guard byte == UInt8(ascii: "}") else { throw fail(.unexpectedByte(byte), at: position - 1) }
                    value = .object(Self.closeObject(frame, values: &values, keys: &keys))
                } else {
                    if byte == UInt8(ascii: ",") { continue nextValue }
                    guard byte == UInt8(ascii: "]") else { throw fail(.unexpectedByte(byte), at: position - 1) }
                    value = .array(Self.closeArray(frame, values: &values))
                }
                frames.removeLast()
            }
            skipWhitespace()
            guard position == end else { throw fail(.trailingCharacters) }
            return value
        }
    }

    /// Moves the pending elements into an exactly sized array without retaining or releasing them.
    private static func closeArray(_ frame: Frame, values: inout [JSON]) -> [JSON] {
        let start = frame.valueStart
        let count = values.count - start
        let elements = [JSON](unsafeUninitializedCapacity: count) { buffer, initialized in
            values.withUnsafeMutableBufferPointer { stack in
                let source = stack.baseAddress! + start
                buffer.baseAddress!.moveInitialize(from: source, count: count)
                source.initialize(repeating: .null, count: count)
            }
            initialized = count
        }
        values.removeLast(count)
        return elements
    }

    /// Builds the object at its final capacity; a repeated name keeps its first position and last value.
    private static func closeObject(_ frame: Frame, values: inout [JSON], keys: inout [String]) -> JSONObject {
        let count = values.count - frame.valueStart
        var members = OrderedDictionary<String, JSON>(minimumCapacity: count)
        for offset in 0..<count {
            members[keys[frame.keyStart + offset]] = values[frame.valueStart + offset]
        }
        values.removeLast(count)
        keys.removeLast(count)
        return JSONObject(members)
    }

    /// Reads `"name" :` and leaves the position at the member's value.
    private mutating func parseKey() throws(JSONParseError) -> String {
        guard position < end else { throw fail(.unexpectedEndOfInput) }
        guard base[position] == UInt8(ascii: "\"") else { throw fail(.unexpectedByte(base[position])) }
        let key = try parseString()
        skipWhitespace()
        guard position < end else { throw fail(.unexpectedEndOfInput) }
        guard base[position] == UInt8(ascii: ":") else { throw fail(.unexpectedByte(base[position])) }
        position += 1
        return key
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let text = literal.utf8Start
        for index in 0..<count {
            guard position + index < end else { throw fail(.unexpectedEndOfInput, at: position + index) }
            guard base[position + index] == text[index] else { throw fail(.invalidLiteral) }
        }
        position += count
    }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    private mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = position
        let negative = base[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        guard position < end else { throw fail(.unexpectedEndOfInput) }
        // Accumulate negatively so Int.min is representable.
        var accumulator = 0
        var overflow = false
        let first = base[position]
        if first == UInt8(ascii: "0") {
            position += 1
            if position < end && Self.isDigit(base[position]) { throw fail(.leadingZero, at: start) }
        } else if Self.isDigit(first) {
            while position < end, Self.isDigit(base[position]) {
                let digit = Int(base[position] &- UInt8(ascii: "0"))
                let (shifted, o1) = accumulator.multipliedReportingOverflow(by: 10)
                let (next, o2) = shifted.subtractingReportingOverflow(digit)
                overflow = overflow || o1 || o2
                accumulator = next
                position += 1
            }
        } else {
            throw fail(.invalidNumber)
        }
        var isInteger = true
        if position < end && base[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < end else { throw fail(.unexpectedEndOfInput) }
            guard Self.isDigit(base[position]) else { throw fail(.invalidNumber) }
            while position < end, Self.isDigit(base[position]) { position += 1 }
        }
        if position < end && (base[position] | 0x20) == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < end && (base[position] == UInt8(ascii: "+") || base[position] == UInt8(ascii: "-")) {
                position += 1
            }
            guard position < end else { throw fail(.unexpectedEndOfInput) }
            guard Self.isDigit(base[position]) else { throw fail(.invalidNumber) }
            while position < end, Self.isDigit(base[position]) { position += 1 }
        }
        if isInteger && !overflow {
            if negative { return accumulator == 0 ? .double(-0.0) : .int(accumulator) }
            if accumulator != Int.min { return .int(-accumulator) }
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: position - start), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw fail(.numberOutOfRange, at: start) }
        return .double(double)
    }

    /// Reads a string starting at its opening quote; ASCII and UTF-8 without escapes take the copy-free path.
    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        let start = position
        while position < end {
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                let string = String(
                    decoding: UnsafeBufferPointer(start: base + start, count: position - start), as: UTF8.self)
                position += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { return try parseEscapedString(from: start) }
            if byte < 0x20 { throw fail(.controlCharacterInString(byte)) }
            if byte >= 0x80 { try skipUTF8Sequence() } else { position += 1 }
        }
        throw fail(.unexpectedEndOfInput)
    }

    private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: base + start, count: position - start))
        while position < end {
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") {
                try readEscape()
            } else if byte < 0x20 {
                throw fail(.controlCharacterInString(byte))
            } else if byte >= 0x80 {
                let sequenceStart = position
                try skipUTF8Sequence()
                let sequence = UnsafeBufferPointer(start: base + sequenceStart, count: position - sequenceStart)
                scratch.append(contentsOf: sequence)
            } else {
                scratch.append(byte)
                position += 1
            }
        }
        throw fail(.unexpectedEndOfInput)
    }

    private mutating func readEscape() throws(JSONParseError) {
        let escapeStart = position
        position += 1
        guard position < end else { throw fail(.unexpectedEndOfInput) }
        let byte = base[position]
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try readHex4()
            var scalar = UInt32(unit)
            if unit >= 0xD800 && unit <= 0xDBFF {
                guard position + 1 < end, base[position] == UInt8(ascii: "\\"), base[position + 1] == UInt8(ascii: "u")
                else { throw fail(.loneSurrogate(unit), at: escapeStart) }
                position += 2
                let low = try readHex4()
                guard low >= 0xDC00 && low <= 0xDFFF else { throw fail(.loneSurrogate(unit), at: escapeStart) }
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                throw fail(.loneSurrogate(unit), at: escapeStart)
            }
            appendUTF8(scalar)
        default:
            throw fail(.invalidEscape(byte), at: escapeStart)
        }
    }

    private mutating func readHex4() throws(JSONParseError) -> UInt16 {
        guard position + 4 <= end else { throw fail(.unexpectedEndOfInput, at: end) }
        var value: UInt16 = 0
        for index in 0..<4 {
            let byte = base[position + index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail(.invalidUnicodeEscape, at: position + index)
            }
            value = value << 4 | UInt16(digit)
        }
        position += 4
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Validates one multi-byte UTF-8 sequence at the position (Unicode Table 3-7) and steps over it.
    private mutating func skipUTF8Sequence() throws(JSONParseError) {
        let lead = base[position]
        let length: Int
        var secondLow: UInt8 = 0x80
        var secondHigh: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondLow = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondHigh = 0x9F
        case 0xF0: length = 4; secondLow = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondHigh = 0x8F
        default: throw fail(.invalidUTF8)
        }
        guard position + length <= end else { throw fail(.invalidUTF8) }
        let second = base[position + 1]
        guard second >= secondLow && second <= secondHigh else { throw fail(.invalidUTF8) }
        for index in 2..<length where base[position + index] & 0xC0 != 0x80 { throw fail(.invalidUTF8) }
        position += length
    }
}
