extension JSON {
    /// Compact UTF-8 JSON text, ready to send: members in stored order, no whitespace.
    ///
    /// Doubles use the shortest text that parses back to the same value; `NaN` and infinities have no
    /// JSON form and are written as `null`.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(JSONWriter.estimatedSize(self))
        JSONWriter.write(self, into: &out)
        return out
    }

    /// Appends the compact text to an existing buffer, so frames can be assembled without extra copies.
    public func serialize(into buffer: inout [UInt8]) {
        JSONWriter.write(self, into: &buffer)
    }

    /// Human-readable text with two-space indentation when `prettyPrinted`, for terminals and logs.
    public func serialized(prettyPrinted: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(JSONWriter.estimatedSize(self))
        if prettyPrinted {
            JSONWriter.writePretty(self, indent: 0, into: &out)
        } else {
            JSONWriter.write(self, into: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension JSON: CustomStringConvertible {
    /// The compact JSON text, so interpolating a value shows exactly what goes over the wire.
    public var description: String { serialized(prettyPrinted: false) }
}
