import LockstepJSON

/// Writes JSON objects member by member straight into bytes. A snapshot's history holds thousands of patches; building
/// them as a `JSON` tree first, only to serialize and free it, was most of what a snapshot cost.
struct JSONObjectWriter {
    private var bytes: [UInt8]
    private var needsComma = false

    /// Starts an object.
    init() {
        bytes = [UInt8(ascii: "{")]
    }

    /// Starts an object at the end of `bytes`, which it takes over (so appending never copies them).
    private init(taking bytes: inout [UInt8]) {
        self.bytes = []
        swap(&self.bytes, &bytes)
        self.bytes.append(UInt8(ascii: "{"))
    }

    /// Writes `"key":` and then whatever `value` appends. Keys are Lockstep's own, plain ASCII names.
    mutating func member(_ key: StaticString, _ value: (inout [UInt8]) -> Void) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        value(&bytes)
    }

    mutating func member(_ key: StaticString, _ value: JSON) {
        member(key) { value.serialize(into: &$0) }
    }

    mutating func member(_ key: StaticString, _ patch: JSONPatch) {
        member(key) { patch.serialize(into: &$0) }
    }

    /// Writes `"key":[...]` with one element per item, each written by `write`.
    mutating func member<Items: Sequence>(
        _ key: StaticString, each items: Items, _ write: (Items.Element, inout [UInt8]) -> Void
    ) {
        member(key) { bytes in
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item, &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        }
    }

    /// Closes the object and hands over all the bytes (moved out, so that they stay uniquely owned).
    mutating func finished() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        var finished: [UInt8] = []
        swap(&finished, &bytes)
        return finished
    }

    /// One object written into `bytes` by `body`.
    static func object(into bytes: inout [UInt8], _ body: (inout JSONObjectWriter) -> Void) {
        var writer = JSONObjectWriter(taking: &bytes)
        body(&writer)
        bytes = writer.finished()
    }
}
