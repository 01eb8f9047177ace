/// One key press, decoded from the bytes a terminal sends in raw mode.
enum Key: Equatable {
    case text(String)
    case enter, backspace, delete, left, right, up, down, home, end
    case control(Character)

    /// Turns raw bytes into keys, keeping an incomplete escape sequence or UTF-8 character for the next chunk.
    struct Decoder {
        private var pending: [UInt8] = []

        mutating func feed(_ bytes: [UInt8]) -> [Key] {
            pending += bytes
            var keys: [Key] = []
            var index = 0
            while index < pending.count {
                let byte = pending[index]
                switch byte {
                case 0x1B:
                    guard index + 1 < pending.count else {
                        // A lone Escape: nothing to do with it.
                        index += 1
                        continue
                    }
                    guard pending[index + 1] == UInt8(ascii: "[") || pending[index + 1] == UInt8(ascii: "O") else {
                        index += 2
                        continue
                    }
                    var end = index + 2
                    while end < pending.count, !(0x40...0x7E).contains(pending[end]) { end += 1 }
                    guard end < pending.count else {
                        pending.removeFirst(index)
                        return keys
                    }
                    let parameters = String(decoding: pending[(index + 2)..<end], as: UTF8.self)
                    switch (pending[end], parameters) {
                    case (UInt8(ascii: "A"), _): keys.append(.up)
                    case (UInt8(ascii: "B"), _): keys.append(.down)
                    case (UInt8(ascii: "C"), _): keys.append(.right)
                    case (UInt8(ascii: "D"), _): keys.append(.left)
                    case (UInt8(ascii: "H"), _), (UInt8(ascii: "~"), "1"), (UInt8(ascii: "~"), "7"): keys.append(.home)
                    case (UInt8(ascii: "F"), _), (UInt8(ascii: "~"), "4"), (UInt8(ascii: "~"), "8"): keys.append(.end)
                    case (UInt8(ascii: "~"), "3"): keys.append(.delete)
                    default: break
                    }
                    index = end + 1
                case 0x0D, 0x0A: keys.append(.enter); index += 1
                case 0x7F, 0x08: keys.append(.backspace); index += 1
                case 0x01...0x1A: keys.append(.control(Character(Unicode.Scalar(byte + 0x60)))); index += 1
                case 0x00..<0x20: index += 1
                default:
                    let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                    guard index + length <= pending.count else {
                        pending.removeFirst(index)
                        return keys
                    }
                    keys.append(.text(String(decoding: pending[index..<(index + length)], as: UTF8.self)))
                    index += length
                }
            }
            pending.removeAll()
            return keys
        }
    }
}
