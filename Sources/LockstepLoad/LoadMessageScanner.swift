/// Reads the few fields `lockstep load` needs straight from a server message's bytes, without a JSON parser.
///
/// Parsing every patch fully would make the generator the bottleneck at hundreds of thousands of deliveries a
/// second. The server writes its fields in a stable order (`type` first, then a patch's `version`; its `cause`,
/// with the action's `id`, comes after the ops, followed only by the generator's own action and the undo and redo
/// counts), so a scan for a few keys is exact for Lockstep and for the C baseline alike.
enum LoadMessageScanner {
    /// The message kinds the generator distinguishes, told apart by the first letters of `type`.
    enum Kind {
        case patch, ack, snapshot, resume, presence, error, other
    }

    /// The fields of one action id `w<writer>-<sequence>-<nanos>` the generator cares about.
    struct ActionID {
        var writer: Int
        /// The writer's count of actions sent, this one included.
        var sequence: Int
        /// When the action was scheduled to be sent, in `LoadClock` nanoseconds.
        var scheduledNanos: UInt64
    }

    private static let typePrefix: [UInt8] = Array(#"{"type":""#.utf8)
    private static let versionKey: [UInt8] = Array(#""version":"#.utf8)
    private static let idKey: [UInt8] = Array(#""id":""#.utf8)

    static func kind(of bytes: UnsafeBufferPointer<UInt8>) -> Kind {
        guard bytes.count > typePrefix.count + 1 else { return .other }
        for index in 0..<typePrefix.count where bytes[index] != typePrefix[index] {
            return .other
        }
        let first = bytes[typePrefix.count], second = bytes[typePrefix.count + 1]
        switch (first, second) {
        case (UInt8(ascii: "p"), UInt8(ascii: "a")): return .patch
        case (UInt8(ascii: "p"), UInt8(ascii: "r")): return .presence
        case (UInt8(ascii: "a"), _): return .ack
        case (UInt8(ascii: "s"), _): return .snapshot
        case (UInt8(ascii: "r"), UInt8(ascii: "e")): return .resume
        case (UInt8(ascii: "e"), _): return .error
        default: return .other
        }
    }

    /// The first `"version":N` at or after `start`, and the index just past it.
    static func version(in bytes: UnsafeBufferPointer<UInt8>, from start: Int = 0) -> (value: Int, end: Int)? {
        guard let keyEnd = find(versionKey, in: bytes, from: start) else { return nil }
        return integer(in: bytes, at: keyEnd)
    }

    /// A patch's `cause.id`, when it is one of ours. Searched from the end: the cause comes last but for the
    /// generator's own small action and the undo and redo counts, while the ops before it can be long (a forward
    /// scan over them was a quarter of the generator's time).
    static func causeID(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> ActionID? {
        guard let idStart = lastActionID(in: bytes, after: start) else { return nil }
        return actionID(in: bytes, at: idStart)
    }

    /// The first `"id":"…"` at or after `start`, when it is one of ours.
    static func firstID(in bytes: UnsafeBufferPointer<UInt8>, from start: Int = 0) -> ActionID? {
        guard let idStart = find(idKey, in: bytes, from: start) else { return nil }
        return actionID(in: bytes, at: idStart)
    }

    /// Parses `w<writer>-<sequence>-<nanos>"` starting at `index`.
    private static func actionID(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> ActionID? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "w"),
              let writer = integer(in: bytes, at: index + 1),
              writer.end < bytes.count, bytes[writer.end] == UInt8(ascii: "-"),
              let sequence = integer(in: bytes, at: writer.end + 1),
              sequence.end < bytes.count, bytes[sequence.end] == UInt8(ascii: "-"),
              let nanos = integer(in: bytes, at: sequence.end + 1)
        else { return nil }
        return ActionID(writer: writer.value, sequence: sequence.value, scheduledNanos: UInt64(nanos.value))
    }

    /// A non-negative decimal integer starting exactly at `index`.
    private static func integer(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (value: Int, end: Int)? {
        var value = 0
        var cursor = index
        while cursor < bytes.count {
            let digit = Int(bytes[cursor]) &- 48
            guard digit >= 0, digit <= 9 else { break }
            value = value &* 10 &+ digit
            cursor += 1
        }
        return cursor == index ? nil : (value, cursor)
    }

    /// The index just past the first occurrence of `needle` at or after `start`.
    private static func find(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        needle.withUnsafeBufferPointer { key in
            let first = key[0]
            var index = start
            let last = bytes.count - key.count
            while index <= last {
                if bytes[index] == first {
                    var matched = 1
                    while matched < key.count, bytes[index + matched] == key[matched] { matched += 1 }
                    if matched == key.count { return index + key.count }
                }
                index += 1
            }
            return nil
        }
    }

    /// The index just past the last `"id":"w` after `start`, searched from the end.
    private static func lastActionID(in bytes: UnsafeBufferPointer<UInt8>, after start: Int) -> Int? {
        var end = bytes.count
        while let index = lastW(in: bytes, before: end, notBefore: start + idKey.count) {
            var matched = 0
            while matched < idKey.count, bytes[index - idKey.count + matched] == idKey[matched] { matched += 1 }
            if matched == idKey.count { return index }
            end = index
        }
        return nil
    }

    /// The index of the last `w` in `bytes[floor..<end]`. Eight bytes at a time: a message's tail after its cause
    /// id is tens of bytes, read for every delivery.
    private static func lastW(in bytes: UnsafeBufferPointer<UInt8>, before end: Int, notBefore floor: Int) -> Int? {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let ws = ones &* UInt64(UInt8(ascii: "w"))
        var cursor = end
        let raw = UnsafeRawBufferPointer(bytes)
        while cursor - 8 >= floor {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: cursor - 8, as: UInt64.self)) ^ ws
            // Nonzero exactly when one of the eight bytes is a `w`; which one is read byte by byte below.
            if (word &- ones) & ~word & highs != 0 { break }
            cursor -= 8
        }
        let stop = max(floor, cursor - 8)
        while cursor > stop {
            cursor -= 1
            if bytes[cursor] == UInt8(ascii: "w") { return cursor }
        }
        return nil
    }
}
