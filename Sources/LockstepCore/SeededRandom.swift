/// A random number generator seeded from a room's epoch and a version (SplitMix64): the same sequence on every
/// server and in every replay of that change.
///
/// ```swift
/// var random = context.random
/// let die = Int.random(in: 1...6, using: &random)
/// ```
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that starts from `seed`; the same seed gives the same numbers.
    public init(seed: UInt64) {
        state = seed
    }

    /// A generator for the change at `version` of the room whose epoch is `epoch`.
    public init(epoch: String, version: Int) {
        // FNV-1a over the epoch's bytes, then the version: stable across processes, unlike `Hasher`.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in epoch.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        self.init(seed: hash ^ UInt64(bitPattern: Int64(version)))
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
