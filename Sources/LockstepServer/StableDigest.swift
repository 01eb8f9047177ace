/// A 128-bit digest of bytes that is the same in every process and on every server, unlike `Hasher`: FNV-1a, twice
/// with different offsets, as 32 hex digits. Names, not security: it tells requests and epochs apart.
enum StableDigest {
    static func hex(of bytes: some Sequence<UInt8>) -> String {
        [0xcbf2_9ce4_8422_2325, 0x6c62_272e_07bb_0142].map { (offset: UInt64) in
            let hash = bytes.reduce(offset) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
            let hex = String(hash, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
