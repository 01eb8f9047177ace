/// An RFC 6902 patch: the ordered operations that turn one state into the next, sent to every client.
public struct JSONPatch: Sendable, Hashable {
    /// The operations, applied in order.
    public var operations: [PatchOperation]

    /// Wraps operations built in code or by `init(from:to:at:)`.
    public init(_ operations: [PatchOperation] = []) { self.operations = operations }

    /// Whether applying the patch changes nothing (and can be skipped on the wire).
    public var isEmpty: Bool { operations.isEmpty }

    /// Reads a patch document (a JSON array of operation objects) as received from a client.
    public init(json: JSON) throws(JSONPatchError) {
        guard case .array(let elements) = json else { throw JSONPatchError(reason: .patchNotAnArray) }
        var operations: [PatchOperation] = []
        operations.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do {
                operations.append(try PatchOperation(json: element))
            } catch {
                var located = error
                located.operationIndex = index
                throw located
            }
        }
        self.operations = operations
    }

    /// The patch as a JSON array of operation objects.
    public var json: JSON { .array(operations.map(\.json)) }

    /// Appends the compact patch text; the server encodes each patch once and sends these bytes to all.
    public func serialize(into buffer: inout [UInt8]) {
        ByteSink.append(to: &buffer, estimatedSize: estimatedSize) { write(into: &$0) }
    }

    /// The compact patch text as bytes.
    public func serialized() -> [UInt8] {
        ByteSink.collect(estimatedSize: estimatedSize) { write(into: &$0) }
    }

    private var estimatedSize: Int { 2 + operations.count * 64 }

    private func write(into out: inout ByteSink) {
        out.append(UInt8(ascii: "["))
        for (index, operation) in operations.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            operation.write(into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}

extension JSONPatch: CustomStringConvertible {
    /// The compact patch text, for logs and test failures.
    public var description: String { String(decoding: serialized(), as: UTF8.self) }
}
