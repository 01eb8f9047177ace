extension JSON {
    /// Compact UTF-8 JSON text, ready to send: members in stored order, no whitespace.
    ///
    /// Doubles use the shortest text that parses back to the same value; `NaN` and infinities have no
    /// JSON form and are written as `null`.
    public func serialized() -> [UInt8] {
        ByteSink.collect(estimatedSize: JSONWriter.estimatedSize(self)) { JSONWriter.write(self, into: &$0) }
    }

    /// Appends the compact text to an existing buffer, so frames can be assembled without extra copies.
    public func serialize(into buffer: inout [UInt8]) {
        ByteSink.append(to: &buffer, estimatedSize: JSONWriter.estimatedSize(self)) {
            JSONWriter.write(self, into: &$0)
        }
    }

    /// Human-readable text with two-space indentation when `prettyPrinted`, for terminals and logs.
    public func serialized(prettyPrinted: Bool) -> String {
        ByteSink.withByteSink(estimatedSize: JSONWriter.estimatedSize(self)) { out in
            if prettyPrinted {
                JSONWriter.writePretty(self, indent: 0, into: &out)
            } else {
                JSONWriter.write(self, into: &out)
            }
            return String(decoding: out.bytes, as: UTF8.self)
        }
    }
}

extension JSON: CustomStringConvertible {
    /// The compact JSON text, so interpolating a value shows exactly what goes over the wire.
    public var description: String { serialized(prettyPrinted: false) }
}
