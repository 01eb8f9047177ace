extension Duration {
    /// Whole nanoseconds, the unit of `LoadClock`; a negative duration counts as none.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(attoseconds / 1_000_000_000)
    }

    /// Seconds, as `lockstep load` reports and multiplies them.
    var seconds: Double { Double(nanoseconds) / 1e9 }
}
