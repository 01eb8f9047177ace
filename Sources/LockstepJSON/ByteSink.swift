/// The output buffer of the serializers: bytes are stored through a raw pointer, so the hot path is a
/// bounds check and a store, without Array's per-append uniqueness and capacity bookkeeping.
///
/// It starts in caller-provided (usually stack) memory and moves to the heap only when that is full.
/// Copyable for simplicity, so use it only through `withByteSink` and never copy it.
struct ByteSink {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int
    private var ownsStorage = false

    private init(initial: UnsafeMutableBufferPointer<UInt8>) {
        base = initial.baseAddress!
        capacity = initial.count
    }

    /// Runs `body` with a sink that starts in stack memory (or on the heap when `estimatedSize` is large).
    static func withByteSink<Result>(estimatedSize: Int, _ body: (inout ByteSink) -> Result) -> Result {
        if estimatedSize > 1024 {
            let heap = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: estimatedSize)
            var sink = ByteSink(initial: heap)
            sink.ownsStorage = true
            defer { sink.release() }
            return body(&sink)
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { stack in
            var sink = ByteSink(initial: stack)
            defer { sink.release() }
            return body(&sink)
        }
    }

    private mutating func release() {
        if ownsStorage { base.deallocate() }
        ownsStorage = false
    }

    /// The written bytes; valid until the sink is written to again.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if _slowPath(capacity &- count < extra) { grow(extra) }
    }

    private mutating func grow(_ extra: Int) {
        let newCapacity = Swift.max(capacity * 2, count + extra)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        if ownsStorage { base.deallocate() }
        base = newBase
        capacity = newCapacity
        ownsStorage = true
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count &+= 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count &+= bytes.count
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Stores one byte without a capacity check; the caller reserved room first.
    @inline(__always)
    mutating func appendUnchecked(_ byte: UInt8) {
        base[count] = byte
        count &+= 1
    }
}

extension ByteSink {
    /// Serializes through a sink and returns an exactly sized array.
    static func collect(estimatedSize: Int, _ body: (inout ByteSink) -> Void) -> [UInt8] {
        withByteSink(estimatedSize: estimatedSize) { sink in
            body(&sink)
            let written = sink.bytes
            return [UInt8](unsafeUninitializedCapacity: written.count) { buffer, initialized in
                if let target = buffer.baseAddress, let source = written.baseAddress {
                    target.initialize(from: source, count: written.count)
                }
                initialized = written.count
            }
        }
    }

    /// Serializes through a sink and appends the bytes to `buffer` in one copy.
    static func append(to buffer: inout [UInt8], estimatedSize: Int, _ body: (inout ByteSink) -> Void) {
        withByteSink(estimatedSize: estimatedSize) { sink in
            body(&sink)
            buffer.append(contentsOf: sink.bytes)
        }
    }
}
