extension JSON {
    /// Parses a complete RFC 8259 document from bytes received off the wire.
    ///
    /// Strict: invalid UTF-8, lone surrogate escapes, raw control characters in strings, leading zeros,
    /// `NaN`/`Infinity`, trailing data and nesting deeper than `maxDepth` containers are all rejected.
    /// Integers without fraction or exponent that fit in `Int` become `.int`; other numbers `.double`,
    /// and `-0` becomes `.double(-0.0)` so its sign survives a round trip. A repeated object key keeps
    /// its first position and its last value.
    public init(parsing bytes: UnsafeRawBufferPointer, maxDepth: Int = 512) throws(JSONParseError) {
        self = try JSONParser.parse(bytes, maxDepth: maxDepth)
    }

    /// Parses bytes held in any collection; contiguous ones are read in place.
    public init(parsing bytes: some Collection<UInt8>, maxDepth: Int = 512) throws(JSONParseError) {
        let parsed = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) in
                try JSONParser.parse(UnsafeRawBufferPointer(buffer), maxDepth: maxDepth)
            }
        }
        if let parsed {
            self = try parsed.get()
        } else {
            let copy = Array(bytes)
            self = try JSON(parsing: copy, maxDepth: maxDepth)
        }
    }

    /// Parses bytes from an array in place.
    public init(parsing bytes: [UInt8], maxDepth: Int = 512) throws(JSONParseError) {
        let parsed = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) in try JSONParser.parse(buffer, maxDepth: maxDepth) }
        }
        self = try parsed.get()
    }

    /// Parses JSON text, e.g. typed by a user or embedded in a test.
    public init(parsing text: String, maxDepth: Int = 512) throws(JSONParseError) {
        var text = text
        let parsed = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in
                try JSONParser.parse(UnsafeRawBufferPointer(buffer), maxDepth: maxDepth)
            }
        }
        self = try parsed.get()
    }
}
