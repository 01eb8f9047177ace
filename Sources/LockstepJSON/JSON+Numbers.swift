extension JSON {
    /// `Int(exactly:)` for doubles without libm: the standard library's version calls `trunc`, which
    /// would force every executable linking LockstepJSON on Linux to link libm (Foundation does; not all do).
    @inline(__always)
    static func exactInt(_ value: Double) -> Int? {
        // -2^63 ≤ value < 2^63: inside Int's range, so the truncating conversion is defined.
        guard value >= -9_223_372_036_854_775_808.0, value < 9_223_372_036_854_775_808.0 else { return nil }
        let truncated = Int(value)
        return Double(truncated) == value ? truncated : nil
    }

    /// The whole number `value` holds as an `I`, if it is whole and in range (up to `UInt64.max`).
    static func exactInteger<I: FixedWidthInteger>(_ value: Double, as type: I.Type) -> I? {
        if let integer = exactInt(value) { return I(exactly: integer) }
        guard value >= 9_223_372_036_854_775_808.0, value < 18_446_744_073_709_551_616.0 else { return nil }
        let truncated = UInt64(value)
        return Double(truncated) == value ? I(exactly: truncated) : nil
    }
}
