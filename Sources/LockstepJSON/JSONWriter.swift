import OrderedCollections

/// Writes JSON text straight into a `ByteSink`: no `String` intermediates except for doubles.
enum JSONWriter {
    static func write(_ value: JSON, into out: inout ByteSink) {
        switch value {
        case .null: out.append("null")
        case .bool(let flag): if flag { out.append("true") } else { out.append("false") }
        case .int(let number): writeInt(number, into: &out)
        case .double(let number): writeDouble(number, into: &out)
        case .string(let text): writeString(text, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            let keys = object.members.keys.elements
            let values = object.members.values.elements
            for index in keys.indices {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(keys[index], into: &out)
                out.append(UInt8(ascii: ":"))
                write(values[index], into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writePretty(_ value: JSON, indent: Int, into out: inout ByteSink) {
        switch value {
        case .array(let elements) where !elements.isEmpty:
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 1, into: &out)
                writePretty(element, indent: indent + 1, into: &out)
            }
            newline(indent, into: &out)
            out.append(UInt8(ascii: "]"))
        case .object(let object) where !object.isEmpty:
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object.members {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                newline(indent + 1, into: &out)
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                out.append(UInt8(ascii: " "))
                writePretty(member, indent: indent + 1, into: &out)
            }
            newline(indent, into: &out)
            out.append(UInt8(ascii: "}"))
        default:
            write(value, into: &out)
        }
    }

    private static func newline(_ indent: Int, into out: inout ByteSink) {
        out.append(0x0A)
        for _ in 0..<(indent * 2) { out.append(0x20) }
    }


    static func writeInt(_ value: Int, into out: inout ByteSink) {
        if value >= 0 && value < 10 {
            out.append(UInt8(truncatingIfNeeded: value) &+ UInt8(ascii: "0"))
            return
        }
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = 20
            repeat {
                index -= 1
                let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 10)
                digits[index] = UInt8(truncatingIfNeeded: remainder) &+ UInt8(ascii: "0")
                magnitude = quotient
            } while magnitude > 0
            out.append(UnsafeBufferPointer(rebasing: digits[index..<20]))
        }
    }

    /// Shortest round-trip text (Swift's `description`), which is always valid JSON for finite values;
    /// non-finite values have no JSON form and are written as `null`.
    static func writeDouble(_ value: Double, into out: inout ByteSink) {
        guard value.isFinite else {
            out.append("null")
            return
        }
        var text = value.description
        text.withUTF8 { out.append($0) }
    }

    static func writeString(_ text: String, into out: inout ByteSink) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { writeEscaped($0, escapingPointerToken: false, into: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// Writes string contents with JSON escapes; with `escapingPointerToken` it also applies RFC 6901's
    /// `~0`/`~1` so a pointer can be written into a JSON string without building it first.
    static func writeEscaped(
        _ bytes: UnsafeBufferPointer<UInt8>, escapingPointerToken: Bool, into out: inout ByteSink
    ) {
        var runStart = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            let plain = byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
                && !(escapingPointerToken && (byte == UInt8(ascii: "~") || byte == UInt8(ascii: "/")))
            if plain {
                index += 1
                continue
            }
            if runStart < index {
                out.append(UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            }
            switch byte {
            case UInt8(ascii: "\""): out.append("\\\"")
            case UInt8(ascii: "\\"): out.append("\\\\")
            case UInt8(ascii: "~"): out.append("~0")
            case UInt8(ascii: "/"): out.append("~1")
            case 0x0A: out.append("\\n")
            case 0x0D: out.append("\\r")
            case 0x09: out.append("\\t")
            case 0x08: out.append("\\b")
            case 0x0C: out.append("\\f")
            default:
                out.append("\\u00")
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0x0F))
            }
            index += 1
            runStart = index
        }
        if runStart < count {
            out.append(UnsafeBufferPointer(rebasing: bytes[runStart..<count]))
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? nibble + UInt8(ascii: "0") : nibble - 10 + UInt8(ascii: "a")
    }

    /// A cheap upper-bound-ish guess of the output size, so the buffer grows at most a few times.
    static func estimatedSize(_ value: JSON) -> Int {
        switch value {
        case .array(let elements): return 2 + elements.count * 16
        case .object(let object): return 2 + object.count * 24
        case .string(let text): return text.utf8.count + 2
        default: return 24
        }
    }
}
